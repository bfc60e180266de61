#include "textflag.h"

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// func gemv4AVX(f *float64, ldf int, z *float64, w int, y *float64, n int)
//
// y[i] = f[i*ldf : i*ldf+w] . z[:w] for i < n, with n a multiple of 4 and
// w a multiple of 4: four rows at a time, one 4-wide FMA accumulator each,
// z loaded once per four rows.
TEXT ·gemv4AVX(SB), NOSPLIT, $0-48
	MOVQ f+0(FP), SI
	MOVQ ldf+8(FP), R8
	SHLQ $3, R8
	MOVQ z+16(FP), DI
	MOVQ w+24(FP), R12
	SHLQ $3, R12
	MOVQ y+32(FP), DX
	MOVQ n+40(FP), BX

rows4:
	CMPQ BX, $4
	JL   end
	LEAQ (SI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX

cols:
	CMPQ AX, R12
	JGE  hsum
	VMOVUPD (DI)(AX*1), Y4
	VFMADD231PD (SI)(AX*1), Y4, Y0
	VFMADD231PD (R9)(AX*1), Y4, Y1
	VFMADD231PD (R10)(AX*1), Y4, Y2
	VFMADD231PD (R11)(AX*1), Y4, Y3
	ADDQ $32, AX
	JMP  cols

hsum:
	VHADDPD    Y1, Y0, Y0
	VHADDPD    Y3, Y2, Y2
	VPERM2F128 $0x21, Y2, Y0, Y5
	VBLENDPD   $0x0C, Y2, Y0, Y6
	VADDPD     Y5, Y6, Y0
	VMOVUPD    Y0, (DX)
	ADDQ $32, DX
	LEAQ (R11)(R8*1), SI
	SUBQ $4, BX
	JMP  rows4

end:
	VZEROUPPER
	RET

// func dotAVX(x, y *float64, n int) float64
//
// x[:n] . y[:n] with n a multiple of 4: four 4-wide FMA accumulators over
// 16 elements, then 4 at a time.
TEXT ·dotAVX(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	SHLQ $3, CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-128, BX

loop16:
	CMPQ AX, BX
	JGE  loop4
	VMOVUPD (SI)(AX*1), Y4
	VMOVUPD 32(SI)(AX*1), Y5
	VMOVUPD 64(SI)(AX*1), Y6
	VMOVUPD 96(SI)(AX*1), Y7
	VFMADD231PD (DI)(AX*1), Y4, Y0
	VFMADD231PD 32(DI)(AX*1), Y5, Y1
	VFMADD231PD 64(DI)(AX*1), Y6, Y2
	VFMADD231PD 96(DI)(AX*1), Y7, Y3
	ADDQ $128, AX
	JMP  loop16

loop4:
	CMPQ AX, CX
	JGE  done
	VMOVUPD (SI)(AX*1), Y4
	VFMADD231PD (DI)(AX*1), Y4, Y0
	ADDQ $32, AX
	JMP  loop4

done:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	MOVSD X0, ret+24(FP)
	VZEROUPPER
	RET

// func gemv4x2AVX(f *float64, ldf int, z1, z2 *float64, w int, y1, y2 *float64, n int)
//
// gemv4AVX for two vectors z1, z2 at once: each load of f feeds two FMAs,
// which halves the traffic from L2 when f (the ops of a step, tens of KB)
// does not fit in L1.
TEXT ·gemv4x2AVX(SB), NOSPLIT, $0-64
	MOVQ f+0(FP), SI
	MOVQ ldf+8(FP), R8
	SHLQ $3, R8
	MOVQ z1+16(FP), DI
	MOVQ z2+24(FP), R13
	MOVQ w+32(FP), R12
	SHLQ $3, R12
	MOVQ y1+40(FP), DX
	MOVQ y2+48(FP), R14
	MOVQ n+56(FP), BX

rows4:
	CMPQ BX, $4
	JL   end
	LEAQ (SI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ AX, AX

cols:
	CMPQ AX, R12
	JGE  hsum
	VMOVUPD (DI)(AX*1), Y8
	VMOVUPD (R13)(AX*1), Y9
	VMOVUPD (SI)(AX*1), Y10
	VFMADD231PD Y10, Y8, Y0
	VFMADD231PD Y10, Y9, Y4
	VMOVUPD (R9)(AX*1), Y11
	VFMADD231PD Y11, Y8, Y1
	VFMADD231PD Y11, Y9, Y5
	VMOVUPD (R10)(AX*1), Y10
	VFMADD231PD Y10, Y8, Y2
	VFMADD231PD Y10, Y9, Y6
	VMOVUPD (R11)(AX*1), Y11
	VFMADD231PD Y11, Y8, Y3
	VFMADD231PD Y11, Y9, Y7
	ADDQ $32, AX
	JMP  cols

hsum:
	VHADDPD    Y1, Y0, Y0
	VHADDPD    Y3, Y2, Y2
	VPERM2F128 $0x21, Y2, Y0, Y10
	VBLENDPD   $0x0C, Y2, Y0, Y11
	VADDPD     Y10, Y11, Y0
	VMOVUPD    Y0, (DX)
	VHADDPD    Y5, Y4, Y4
	VHADDPD    Y7, Y6, Y6
	VPERM2F128 $0x21, Y6, Y4, Y10
	VBLENDPD   $0x0C, Y6, Y4, Y11
	VADDPD     Y10, Y11, Y4
	VMOVUPD    Y4, (R14)
	ADDQ $32, DX
	ADDQ $32, R14
	LEAQ (R11)(R8*1), SI
	SUBQ $4, BX
	JMP  rows4

end:
	VZEROUPPER
	RET

// func axpyAVX(a float64, x, y *float64, n int)
//
// y[:n] += a x[:n] with n a multiple of 4.
TEXT ·axpyAVX(SB), NOSPLIT, $0-32
	VBROADCASTSD a+0(FP), Y0
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	SHLQ $3, CX
	XORQ AX, AX

loop:
	CMPQ AX, CX
	JGE  done
	VMOVUPD (DI)(AX*1), Y1
	VFMADD231PD (SI)(AX*1), Y0, Y1
	VMOVUPD Y1, (DI)(AX*1)
	ADDQ $32, AX
	JMP  loop

done:
	VZEROUPPER
	RET

// func dot2AVX(x, y1, y2 *float64, n int) (s1, s2 float64)
//
// dotAVX of x with y1 and with y2 at once, each with dotAVX's
// accumulators, order and reduction (so each sum has dotAVX's bits):
// eight FMA chains instead of four, which dotAVX's latency left idle.
TEXT ·dot2AVX(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y1+8(FP), DI
	MOVQ y2+16(FP), R8
	MOVQ n+24(FP), CX
	SHLQ $3, CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-128, BX

loop16:
	CMPQ AX, BX
	JGE  loop4
	VMOVUPD (SI)(AX*1), Y4
	VMOVUPD 32(SI)(AX*1), Y5
	VMOVUPD 64(SI)(AX*1), Y6
	VMOVUPD 96(SI)(AX*1), Y7
	VFMADD231PD (DI)(AX*1), Y4, Y0
	VFMADD231PD (R8)(AX*1), Y4, Y8
	VFMADD231PD 32(DI)(AX*1), Y5, Y1
	VFMADD231PD 32(R8)(AX*1), Y5, Y9
	VFMADD231PD 64(DI)(AX*1), Y6, Y2
	VFMADD231PD 64(R8)(AX*1), Y6, Y10
	VFMADD231PD 96(DI)(AX*1), Y7, Y3
	VFMADD231PD 96(R8)(AX*1), Y7, Y11
	ADDQ $128, AX
	JMP  loop16

loop4:
	CMPQ AX, CX
	JGE  done
	VMOVUPD (SI)(AX*1), Y4
	VFMADD231PD (DI)(AX*1), Y4, Y0
	VFMADD231PD (R8)(AX*1), Y4, Y8
	ADDQ $32, AX
	JMP  loop4

done:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	MOVSD X0, s1+32(FP)
	VADDPD Y9, Y8, Y8
	VADDPD Y11, Y10, Y10
	VADDPD Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPD X9, X8, X8
	VHADDPD X8, X8, X8
	MOVSD X8, s2+40(FP)
	VZEROUPPER
	RET

// func dot3AVX(x, y1, y2, y3 *float64, n int) (s1, s2, s3 float64)
//
// dotAVX of x with y1, y2 and y3 at once (each sum with dotAVX's bits):
// twelve FMA chains and the four loads of x shared by three, all sixteen
// YMM registers.
TEXT ·dot3AVX(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ y1+8(FP), DI
	MOVQ y2+16(FP), R8
	MOVQ y3+24(FP), R9
	MOVQ n+32(FP), CX
	SHLQ $3, CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-128, BX

loop16:
	CMPQ AX, BX
	JGE  loop4
	VMOVUPD (SI)(AX*1), Y4
	VMOVUPD 32(SI)(AX*1), Y5
	VMOVUPD 64(SI)(AX*1), Y6
	VMOVUPD 96(SI)(AX*1), Y7
	VFMADD231PD (DI)(AX*1), Y4, Y0
	VFMADD231PD (R8)(AX*1), Y4, Y8
	VFMADD231PD (R9)(AX*1), Y4, Y12
	VFMADD231PD 32(DI)(AX*1), Y5, Y1
	VFMADD231PD 32(R8)(AX*1), Y5, Y9
	VFMADD231PD 32(R9)(AX*1), Y5, Y13
	VFMADD231PD 64(DI)(AX*1), Y6, Y2
	VFMADD231PD 64(R8)(AX*1), Y6, Y10
	VFMADD231PD 64(R9)(AX*1), Y6, Y14
	VFMADD231PD 96(DI)(AX*1), Y7, Y3
	VFMADD231PD 96(R8)(AX*1), Y7, Y11
	VFMADD231PD 96(R9)(AX*1), Y7, Y15
	ADDQ $128, AX
	JMP  loop16

loop4:
	CMPQ AX, CX
	JGE  done
	VMOVUPD (SI)(AX*1), Y4
	VFMADD231PD (DI)(AX*1), Y4, Y0
	VFMADD231PD (R8)(AX*1), Y4, Y8
	VFMADD231PD (R9)(AX*1), Y4, Y12
	ADDQ $32, AX
	JMP  loop4

done:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	MOVSD X0, s1+40(FP)
	VADDPD Y9, Y8, Y8
	VADDPD Y11, Y10, Y10
	VADDPD Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPD X9, X8, X8
	VHADDPD X8, X8, X8
	MOVSD X8, s2+48(FP)
	VADDPD Y13, Y12, Y12
	VADDPD Y15, Y14, Y14
	VADDPD Y14, Y12, Y12
	VEXTRACTF128 $1, Y12, X13
	VADDPD X13, X12, X12
	VHADDPD X12, X12, X12
	MOVSD X12, s3+56(FP)
	VZEROUPPER
	RET

// func axpyUnfusedAVX(a float64, x, y *float64, n int)
//
// y[:n] += a * x[:n] with the product rounded before the add (a multiply,
// then an add: the bits of the scalar loop), n a multiple of 4.
TEXT ·axpyUnfusedAVX(SB), NOSPLIT, $0-32
	VBROADCASTSD a+0(FP), Y0
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	SHLQ $3, CX
	XORQ AX, AX

loop:
	CMPQ AX, CX
	JGE  done
	VMULPD (SI)(AX*1), Y0, Y1
	VADDPD (DI)(AX*1), Y1, Y1
	VMOVUPD Y1, (DI)(AX*1)
	ADDQ $32, AX
	JMP  loop

done:
	VZEROUPPER
	RET
