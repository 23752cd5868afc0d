#!/bin/busybox sh
# /init of the kernel test's reclaim guest (busybox only, no swap): each knob's halves
# acting alone, seen through /proc/vmstat and the vmscan trace events. Prints "@@"
# lines; every verdict is made on the host (tests/test_kernel.py).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tracefs tracefs /sys/kernel/tracing
vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
fresh() { sync; echo 3 > /proc/sys/vm/drop_caches; }
readfile() { dd if="$1" of=/dev/null bs=1M 2>/dev/null; }
event=/sys/kernel/tracing/events/vmscan/mm_vmscan_lru_shrink_active
echo "@@tracing $( [ -d $event ] && echo yes || echo no )"

# refault_scan_anon=0 leaves refault-driven deactivation alone: a file read twice is
# active (30 MiB), then a 60 MiB file is read three times and refaults; its activating
# refaults let reclaim deactivate the first file (pgdeactivate) whatever the knob.
for v in 1 0; do
  echo $v > /proc/sys/vm/refault_scan_anon; fresh
  readfile /data/a; readfile /data/a
  d0=$(vm pgdeactivate); r0=$(vm workingset_activate_file)
  for i in 1 2 3; do readfile /data/stream; done
  echo "@@refaultdeact $v $(( $(vm pgdeactivate) - d0 )) $(( $(vm workingset_activate_file) - r0 ))"
done
echo 1 > /proc/sys/vm/refault_scan_anon

scanned() { echo $(( $(vm pgscan_kswapd) + $(vm pgscan_direct) )); }

# exec_protect bit 1 (first use): exec pages touched once, then 90 MiB read once push
# them through the inactive list. With the bit they are activated on their first scan.
for v in 3 1 2 0; do
  echo $v > /proc/sys/vm/exec_protect; fresh
  /bin/exectouch /data/exec once > /dev/null & pid=$!
  sleep 1
  a0=$(vm pgactivate); s0=$(scanned)
  readfile /data/stream; readfile /data/b
  echo "@@firstuse $v $(( $(vm pgactivate) - a0 )) $(( $(scanned) - s0 ))"
  kill $pid; wait $pid 2>/dev/null
done

# exec_protect bit 0 (seed 000): exec pages in use while two files read twice fill the
# active list, so shrink_active_list() scans it. With the bit the referenced exec
# pages are rotated (the trace's nr_referenced counts exactly those).
for v in 3 1 2 0; do
  echo $v > /proc/sys/vm/exec_protect; fresh
  echo > /sys/kernel/tracing/trace
  echo 1 > $event/enable
  /bin/exectouch /data/exec 20 60 > /dev/null & pid=$!
  sleep 1
  for f in /data/a /data/a /data/b /data/b /data/a /data/b; do readfile $f; done
  echo 0 > $event/enable
  kill $pid; wait $pid 2>/dev/null
  rotated=$(awk '/RECLAIM_WB_FILE/ { for (i = 1; i <= NF; i++) if ($i ~ /^nr_referenced=/) { split($i, kv, "="); n += kv[2] } } END { print n + 0 }' /sys/kernel/tracing/trace)
  scans=$(grep -c RECLAIM_WB_FILE /sys/kernel/tracing/trace)
  echo "@@rotated $v $rotated $scans"
done
echo 3 > /proc/sys/vm/exec_protect

echo "@@done"
sync
poweroff -f
