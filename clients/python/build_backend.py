"""A PEP 517 build backend of the standard library only.

It builds the wheel of the pure-Python package bkb_client (and an sdist),
so that `pip install clients/python` needs nothing from the network.
Metadata is read from pyproject.toml with tomllib (Python 3.11+) or, on
older versions, from the few fields this file needs.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "bkb_client"


def _project():
    text = open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8").read()
    try:
        import tomllib

        return tomllib.loads(text)["project"]
    except ImportError:  # Python < 3.11
        out = {}
        for key in ("name", "version", "description", "requires-python"):
            m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), text, re.M)
            if m:
                out[key] = m.group(1)
        return out


def _dist_name(p):
    return p["name"].replace("-", "_")


def _metadata(p):
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p.get("description", ""),
    ]
    if p.get("requires-python"):
        lines.append("Requires-Python: %s" % p["requires-python"])
    return "\n".join(lines) + "\n"


def _files():
    root = os.path.join(HERE, PACKAGE)
    for dirpath, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith(".py"):
                full = os.path.join(dirpath, n)
                yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    dist = "%s-%s" % (_dist_name(p), p["version"])
    name = dist + "-py3-none-any.whl"
    info = dist + ".dist-info"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:

        def add(arc, data):
            z.writestr(arc, data)
            records.append(_record_line(arc, data))

        for full, arc in _files():
            add(arc, open(full, "rb").read())
        add(info + "/METADATA", _metadata(p).encode())
        add(info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: bkb build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        records.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(records) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    dist = "%s-%s" % (_dist_name(p), p["version"])
    name = dist + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ("pyproject.toml", "build_backend.py", "README.md"):
            t.add(os.path.join(HERE, rel), dist + "/" + rel)
        for full, arc in _files():
            t.add(full, dist + "/" + arc)
        data = _metadata(p).encode()
        ti = tarfile.TarInfo(dist + "/PKG-INFO")
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    return name
