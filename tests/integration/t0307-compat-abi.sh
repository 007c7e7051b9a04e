#!/bin/bash
# t0307 (red team): old syscall ABIs. The seccomp filter missed the i386
# umount (22): every rule written for x86_64 numbers means something else
# through int $0x80, and socketcall hides socket calls behind a pointer. Every
# ABI but the native one is refused outright (ENOSYS).
. "$(dirname "$0")/lib.sh"
if [ "$(uname -m)" != x86_64 ]; then
	skip "i386 and x32 entry points" "not an x86_64 machine"
	exit 0
fi
# int $0x80 from a 64-bit process, on an executable page: getpid (i386 nr 20)
cat >"$T/w/int80.py" <<'PY'
import ctypes, mmap, sys
nr = int(sys.argv[1])
code = bytes([0x53, 0xb8]) + nr.to_bytes(4, "little") + bytes([0x31, 0xdb, 0xcd, 0x80, 0x5b, 0xc3])
# push rbx; mov eax, nr; xor ebx, ebx; int 0x80; pop rbx; ret
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
print(ctypes.CFUNCTYPE(ctypes.c_int)(addr)())
PY
outside=$(python3 "$T/w/int80.py" 20 2>/dev/null)
if [ -z "$outside" ] || [ "$outside" -le 0 ]; then
	skip "i386 entry point" "int \$0x80 does not work here even outside (IA32 emulation off: $outside)"
else
	ok "int \$0x80 getpid works outside the sandbox (positive control: $outside)"
	run_sb run -- python3 int80.py 20
	[ "$RC" = 0 ] && [ "$OUT" = -38 ] && ok "int \$0x80 getpid inside: ENOSYS" || notok "int \$0x80 getpid inside: ENOSYS" "rc=$RC out=$OUT"
	# umount (22) with a NULL path: ENOSYS inside, not EFAULT/EPERM from a real umount
	run_sb run -- python3 int80.py 22
	[ "$RC" = 0 ] && [ "$OUT" = -38 ] && ok "i386 umount (22) inside: ENOSYS" || notok "i386 umount (22) inside: ENOSYS" "rc=$RC out=$OUT"
	# socketcall (102): every socket call of the i386 ABI
	run_sb run -- python3 int80.py 102
	[ "$RC" = 0 ] && [ "$OUT" = -38 ] && ok "i386 socketcall (102) inside: ENOSYS" || notok "i386 socketcall inside: ENOSYS" "rc=$RC out=$OUT"
fi
# x32: the x86_64 entry with bit 30 set
x32='import ctypes, os; l = ctypes.CDLL(None, use_errno=True); r = l.syscall(0x40000000 | 39); print(r if r >= 0 else -ctypes.get_errno())'
outside=$(python3 -c "$x32")
run_sb run -- python3 -c "$x32"
if [ "$outside" -gt 0 ] 2>/dev/null; then
	[ "$RC" = 0 ] && [ "$OUT" = -38 ] && ok "x32 getpid inside: ENOSYS" || notok "x32 getpid inside: ENOSYS" "rc=$RC out=$OUT"
else
	[ "$RC" = 0 ] && [ "$OUT" -lt 0 ] && ok "x32 getpid inside fails ($OUT; this kernel has no x32 ABI: $outside)" || notok "x32 getpid inside fails" "rc=$RC out=$OUT"
fi
# positive control: the native call works inside
in_box "native getpid inside works" 'python3 -c "import os; assert os.getpid() > 0"'
