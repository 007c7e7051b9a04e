#!/bin/bash
# t0345: network by name with real clients: pip (into a venv), npm and git
# install and clone from a registry this test serves over HTTPS on
# 127.0.0.1 (a test CA made here), reached as localhost through stepbox's
# proxy, with no setting but the hosts (and the test CA, which a real
# registry's certificate would not need). The positive controls of t0340's
# refusals; a client that found a way around the proxy would still reach
# only this server.
. "$(dirname "$0")/lib.sh"

for tool in openssl git npm node; do
	command -v "$tool" >/dev/null || {
		skip "real clients through the proxy" "$tool is needed"
		exit 0
	}
done

test_ca
mkdir -p "$T/site"

python3 - "$T/port" "$T/site" "$T/srv.pem" "$T/srv.key" <<'PY' &
import functools, http.server, os, ssl, sys, threading
port, site, cert, key = sys.argv[1:5]
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def translate_path(self, path):  # a package's metadata, /NAME, is NAME.json
        p = super().translate_path(path)
        return p + ".json" if os.path.isfile(p + ".json") else p
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=site))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
threading.Thread(target=srv.serve_forever, daemon=True).start()
open(port, "w").write(str(srv.server_address[1]))
threading.Event().wait(600)
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
SP=$(cat "$T/port")
URL="https://localhost:$SP"

# the registry's content: a PEP 503 index with one wheel, an npm package's
# metadata and tarball, a git repository served the dumb way
python3 - "$T/site" "$URL" "$TESTDIR/mkwheel.py" <<'PY'
import base64, hashlib, io, json, os, subprocess, sys, tarfile
site, url, mkwheel = sys.argv[1:4]
whl = subprocess.run([sys.executable, mkwheel, site + "/files", "stepboxdemo", "1.0"],
                     check=True, capture_output=True, text=True).stdout.strip()
digest = hashlib.sha256(open(whl, "rb").read()).hexdigest()
os.makedirs(site + "/simple/stepboxdemo")
with open(site + "/simple/stepboxdemo/index.html", "w") as f:
    name = os.path.basename(whl)
    f.write(f'<html><body><a href="{url}/files/{name}#sha256={digest}">{name}</a></body></html>\n')
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as tar:
    for path, text in (("package/package.json", '{"name": "stepbox-demo", "version": "1.0.0", "main": "index.js"}\n'),
                       ("package/index.js", 'module.exports = "stepbox-demo works";\n')):
        data = text.encode()
        info = tarfile.TarInfo(path)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
tgz = buf.getvalue()
os.makedirs(site + "/stepbox-demo/-")
open(site + "/stepbox-demo/-/stepbox-demo-1.0.0.tgz", "wb").write(tgz)
integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
meta = {"name": "stepbox-demo", "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": {"name": "stepbox-demo", "version": "1.0.0", "main": "index.js",
                               "dist": {"tarball": f"{url}/stepbox-demo/-/stepbox-demo-1.0.0.tgz",
                                        "integrity": integrity,
                                        "shasum": hashlib.sha1(tgz).hexdigest()}}}}
open(site + "/stepbox-demo.json", "w").write(json.dumps(meta))
PY
git init -q --bare "$T/site/repo.git" && git -C "$T/site/repo.git" config http.getanyfile true
git init -q "$T/src" && echo from-the-repo >"$T/src/README" && git -C "$T/src" add README &&
	git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm first &&
	git -C "$T/src" push -q "$T/site/repo.git" HEAD:refs/heads/main &&
	git -C "$T/site/repo.git" symbolic-ref HEAD refs/heads/main &&
	git -C "$T/site/repo.git" update-server-info
chmod -R a+rX "$T/site" "$T"
NET=(--net "host:localhost:$SP,127.0.0.1")
# the step's own loopback stays direct in its network namespace (NO_PROXY):
# the registry here is the host's, so the clients are told to use the proxy
# for localhost too, as a real registry's name would be anyway
D="NO_PROXY= no_proxy="

# pip, into a venv made in the step, from the index by name
pipcmd="python3 -m venv venv && $D PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CERT='$T/ca.pem' REQUESTS_CA_BUNDLE='$T/ca.pem' venv/bin/pip install -q --retries 1 --index-url '$URL/simple/' stepboxdemo && venv/bin/python -c 'import stepboxdemo; print(stepboxdemo.hello())'"
run_sb run "${NET[@]}" -r "$T/ca.pem" -- sh -c "$pipcmd"
[ "$RC" = 0 ] && [ "$OUT" = "stepboxdemo 1.0 works" ] &&
	ok "pip installs through the proxy with --net host: alone" ||
	notok "pip installs through the proxy with --net host: alone" "rc=$RC $OUT" "$(tail -5 "$T/out/err")"
rm -rf venv
run_sb run --explain --net host:example.invalid -r "$T/ca.pem" -- sh -c "$pipcmd"
[ "$RC" != 0 ] && grep -Eq "'localhost' port $SP( \([0-9]+ times\))?: not among the hosts the policy names" "$T/out/err" &&
	ok "pip: an unlisted registry is refused, and --explain names it" ||
	notok "pip: an unlisted registry is refused, and --explain names it" "rc=$RC" "$(grep -A3 'sandbox denied' "$T/out/err")"
rm -rf venv

# npm, from the registry by name (its metadata, then the tarball)
mkdir -p "$T/w/npm"
npmcmd="cd npm && $D npm install --silent --no-audit --no-fund --registry '$URL/' --cafile '$T/ca.pem' stepbox-demo && node -e 'console.log(require(\"stepbox-demo\"))'"
run_sb run "${NET[@]}" -r "$T/ca.pem" -- sh -c "$npmcmd"
[ "$RC" = 0 ] && [ "$OUT" = "stepbox-demo works" ] &&
	ok "npm installs through the proxy with --net host: alone" ||
	notok "npm installs through the proxy with --net host: alone" "rc=$RC $OUT" "$(tail -5 "$T/out/err")"

# git, a clone over HTTPS
run_sb run "${NET[@]}" -r "$T/ca.pem" -- sh -c "$D GIT_SSL_CAINFO='$T/ca.pem' git clone -q '$URL/repo.git' clone && cat clone/README"
[ "$RC" = 0 ] && [ "$OUT" = from-the-repo ] &&
	ok "git clones through the proxy with --net host: alone" ||
	notok "git clones through the proxy with --net host: alone" "rc=$RC $OUT" "$(tail -5 "$T/out/err")"

# npm from the real registry with the @npm preset alone (and refused without
# it); the registry is the one host besides Debian's mirrors this machine may
# reach: skipped cleanly when it cannot be, or when its name resolves here to
# an address no name may reach through the proxy (a mirror on a documentation
# or private range, as some build farms give)
reg_addr=$(python3 -c '
import ipaddress, socket
a = socket.getaddrinfo("registry.npmjs.org", 443, proto=socket.IPPROTO_TCP)[0][4][0]
print(a if ipaddress.ip_address(a).is_global else "reserved:" + a)' 2>/dev/null)
if [ "${reg_addr#reserved:}" != "$reg_addr" ]; then
	skip "npm from the registry with --net host:@npm" "registry.npmjs.org resolves to ${reg_addr#reserved:} here, an address the proxy refuses to a name"
elif [ -n "$reg_addr" ] && npm_config_cache="$T/probe-npm" timeout 20 npm view is-number version >/dev/null 2>&1; then
	mkdir -p "$T/w/real"
	run_sb run --net host:@npm -- sh -c "cd real && npm install --silent --no-audit --no-fund is-number@7.0.0 && node -e 'console.log(require(\"is-number\")(5))'"
	[ "$RC" = 0 ] && [ "$OUT" = true ] &&
		ok "npm installs from the registry with --net host:@npm alone" ||
		notok "npm installs from the registry with --net host:@npm alone" "rc=$RC $OUT" "$(tail -5 "$T/out/err")"
else
	skip "npm from the registry with --net host:@npm" "the npm registry cannot be reached"
fi

# without @npm the registry is refused by name (nothing leaves: the proxy
# refuses before it resolves), and --explain names it
mkdir -p "$T/w/real2"
run_sb run --explain --net host:@pypi -- sh -c "cd real2 && npm install --silent --no-audit --no-fund --fetch-retries=0 is-number@7.0.0"
[ "$RC" != 0 ] && grep -Eq "'registry.npmjs.org' port 443( \\([0-9]+ times\\))?: not among the hosts the policy names" "$T/out/err" &&
	ok "npm without @npm is refused, and --explain names the registry" ||
	notok "npm without @npm is refused, and --explain names the registry" "rc=$RC" "$(grep -A3 'sandbox denied' "$T/out/err")"
