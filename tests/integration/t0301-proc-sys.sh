#!/bin/bash
# t0301 (red team): /proc and /sys. A root step that writes /proc/sys
# (kernel.core_pattern) runs a program as full root on the host; /proc also
# shows the kernel's memory, keys and timers. No /proc/sys or /sys file is
# writable in any mode; the namespace layers mount a private read-only procfs
# with the sensitive entries masked.
. "$(dirname "$0")/lib.sh"

# positive control: the same shell reads what it may not write
in_box "/proc/sys reads" 'test -n "$(cat /proc/sys/kernel/core_pattern)"'
for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/hostname /proc/sys/vm/drop_caches \
	/proc/sysrq-trigger /proc/self/oom_score_adj; do
	[ -e "$f" ] || continue
	run_sb run -- sh -c "echo 1 > $f"
	if [ "$RC" != 0 ] && grep -qiE "$DENIALS|Invalid argument" "$T/out/err"; then ok "write $f refused"
	else notok "write $f refused" "rc=$RC"; fi
done
in_box "/proc/sys/kernel/core_pattern unchanged" "test \"\$(cat /proc/sys/kernel/core_pattern)\" = '$(cat /proc/sys/kernel/core_pattern)'"

# /sys: only /sys/devices/system/cpu, read-only
in_box "/sys/devices/system/cpu reads" 'cat /sys/devices/system/cpu/online'
denied "a /sys file is not writable" 'echo 1 > /sys/devices/system/cpu/cpu0/online || echo 1 > /sys/devices/system/cpu/smt/control'
denied "the rest of /sys is not there or not readable" 'ls /sys/class/net'

if [ "$BACKEND" = landlock ]; then
	skip "masked /proc entries" "Landlock alone: the host's /proc stays visible (docs/security.md)"
	exit 0
fi
# the namespace layers: a read-only procfs, runc's masks
run_sb run -- cat /proc/self/mountinfo
echo "$OUT" | grep -E "^[0-9]+ [0-9]+ [0-9:]+ / /proc .* - proc " | grep -q " /proc ro," && ok "procfs is mounted read-only" ||
	notok "procfs is mounted read-only" "$(echo "$OUT" | grep ' /proc ')"
for m in /proc/kcore /proc/kallsyms /proc/timer_list /proc/keys /proc/sched_debug /proc/sysrq-trigger; do
	[ -e "$m" ] || continue
	run_sb run -- sh -c "wc -c < $m"
	if [ "$RC" = 0 ] && [ "$OUT" = 0 ]; then ok "$m is masked (empty)"
	elif [ "$RC" != 0 ]; then ok "$m is masked (unreadable)"
	else notok "$m is masked" "read $OUT bytes"; fi
done
for d in /proc/acpi /proc/irq /proc/bus; do
	[ -d "$d" ] || continue
	in_box "$d is an empty folder" "test -z \"\$(ls -A $d)\""
done
# positive control: what a step needs from /proc is there
in_box "/proc/cpuinfo, meminfo and self are there" 'grep -q processor /proc/cpuinfo && grep -q MemTotal /proc/meminfo && test -r /proc/self/status'

# A grant of a host process's /proc entry (-r /proc/PID) is never bound into
# the new procfs: under mountns alone a root step reads a same-uid process's
# memory and environment there (red team). The host process is this test's
# own, with a marker on its command line; the control reads the step's own.
sh -c "sleep 300; : stepbox-host-marker-$$" </dev/null >/dev/null 2>&1 &
host=$!
BG_PIDS="$BG_PIDS $host"
for g in "/proc/$host" /proc/self; do
	run_sb run -r "$g" -- sh -c "cat /proc/self/cmdline >/dev/null && echo own-ok; { tr '\\0' ' ' < /proc/$host/cmdline; } 2>/dev/null; true"
	if [ "$RC" = 0 ] && echo "$OUT" | grep -q own-ok && ! echo "$OUT" | grep -q "stepbox-host-marker-$$" &&
		grep -q "not granting flag path '$g': made anew" "$T/out/err"; then
		ok "-r $g: no host process in the new /proc (skipped and said), the step's own reads"
	else
		notok "-r $g: no host process in the new /proc" "rc=$RC out=$OUT err=$(cat "$T/out/err")"
	fi
done
pkill -P "$host" sleep 2>/dev/null
kill "$host" 2>/dev/null
