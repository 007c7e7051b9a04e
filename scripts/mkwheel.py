#!/usr/bin/env python3
"""Build a minimal pure-Python wheel (a zip file) without network or build
tools: mkwheel.py OUTDIR NAME VERSION [CONSOLE_SCRIPT|- [NFILES]]. The package
NAME has one module whose hello() returns a fixed text; with CONSOLE_SCRIPT a
command of that name prints it; NFILES more modules (m00000.py...) make it big.
Prints the wheel's path."""
import base64, hashlib, os, sys, zipfile

out, name, version = sys.argv[1:4]
script = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None
nfiles = int(sys.argv[5]) if len(sys.argv) > 5 else 0
dist = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": f'def hello():\n    return "{name} {version} works"\n'
                           f'def main():\n    print(hello())\n',
    f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: stepbox-mkwheel\n"
                     "Root-Is-Purelib: true\nTag: py3-none-any\n",
}
for i in range(nfiles):
    files[f"{name}/m{i:05d}.py"] = f"N = {i}\n"
if script:
    files[f"{dist}/entry_points.txt"] = f"[console_scripts]\n{script} = {name}:main\n"
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
    record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
record.append(f"{dist}/RECORD,,")
files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
os.makedirs(out, exist_ok=True)
whl = os.path.join(out, f"{name}-{version}-py3-none-any.whl")
with zipfile.ZipFile(whl, "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
print(whl)
