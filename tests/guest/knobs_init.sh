#!/bin/busybox sh
# /init of the kernel test's minimal guest (busybox only). Prints "@@" lines that
# the host test reads; every check's verdict is made on the host.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# name:maximum of every knob; each is checked at 0, its maximum and just outside.
knobs="exec_protect:3 use_once:3 refault_scan_anon:1 madv_free:1 refault_active_file_only:1"
vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

for kv in $knobs; do k=${kv%:*}; echo "@@default $k $(cat /proc/sys/vm/$k)"; done

# Valid writes stick; out-of-range writes fail and leave the value.
for kv in $knobs; do
  k=${kv%:*}; max=${kv#*:}; default=$(cat /proc/sys/vm/$k)
  echo $max > /proc/sys/vm/$k; echo "@@valid $k $max $? $(cat /proc/sys/vm/$k)"
  echo 0 > /proc/sys/vm/$k; echo "@@valid $k 0 $? $(cat /proc/sys/vm/$k)"
  echo $((max + 1)) > /proc/sys/vm/$k; echo "@@invalid $k $((max + 1)) $? $(cat /proc/sys/vm/$k)"
  echo -1 > /proc/sys/vm/$k; echo "@@invalid $k -1 $? $(cat /proc/sys/vm/$k)"
  echo $default > /proc/sys/vm/$k
done

# MGLRU: built in, off at boot, switched at run time.
echo "@@lru_gen boot $(cat /sys/kernel/mm/lru_gen/enabled)"
echo y > /sys/kernel/mm/lru_gen/enabled; echo "@@lru_gen on $(cat /sys/kernel/mm/lru_gen/enabled)"
echo n > /sys/kernel/mm/lru_gen/enabled; echo "@@lru_gen off $(cat /sys/kernel/mm/lru_gen/enabled)"

# madv_free: pglazyfree counts lazily freed pages only when the knob is on.
for v in 1 0; do
  echo $v > /proc/sys/vm/madv_free
  before=$(vm pglazyfree); /bin/madvfree 1024; rc=$?
  echo "@@lazyfree $v $rc $(( $(vm pglazyfree) - before ))"
done
echo 1 > /proc/sys/vm/madv_free

# use_once bit 0: with it, a file read once stays inactive and a second read
# activates it; without it, the first read activates. Each pass reads its own file.
for v in 3 2; do
  echo $v > /proc/sys/vm/use_once
  a0=$(vm nr_active_file)
  dd if=/data/file$v of=/dev/null bs=64k 2>/dev/null
  a1=$(vm nr_active_file)
  dd if=/data/file$v of=/dev/null bs=64k 2>/dev/null
  a2=$(vm nr_active_file)
  echo "@@useonce $v $(( a1 - a0 )) $(( a2 - a1 ))"
done
echo 3 > /proc/sys/vm/use_once
echo "@@done"
sync
poweroff -f
