# For `study run --workload hot-stream --job-extra analysis/traces/hot-stream-faults.sh`:
# traces the interactive program's page faults (address, error code) and its two files'
# page-cache reads and evictions, prints its memory map once it runs, and prints the
# trace at the job's end. The streaming program's own faults and its binary's reads and
# evictions are traced too: what else faults in the stream (its sparse file is not
# traced: the filter would pass every page of the stream); `python -m analysis.fault_trace CONSOLE` splits them by region
# and phase. The job file sources this before the workload starts.
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null
# The buffer is runjob's, 2 MiB a CPU in every run, traced or not; "mono" is the clock
# the workload's phase marks use.
echo mono > $T/trace_clock
D=/usr/share/reclaim/data/hot-stream
ino_exe=$(stat -c %i $D/interactive)
ino_dat=$(stat -c %i $D/interactive.dat)
ino_str=$(stat -c %i /usr/lib/reclaim/workloads/hot-stream/hot-stream)
echo "TRACE: ino exe=$ino_exe dat=$ino_dat stream=$ino_str"
echo 'comm == "interactive" || comm == "hot-stream"' > $T/events/exceptions/page_fault_user/filter
for event in add_to_page_cache delete_from_page_cache; do
  echo "i_ino == $ino_exe || i_ino == $ino_dat || i_ino == $ino_str" \
    > $T/events/filemap/mm_filemap_$event/filter
  echo 1 > $T/events/filemap/mm_filemap_$event/enable
done
echo 1 > $T/events/exceptions/page_fault_user/enable
echo 1 > $T/tracing_on
# Its map, once it runs (shell builtins only: a fork per /proc entry was too slow to
# catch it under QEMU).
( n=0
  while [ $n -lt 3000 ]; do
    for c in /proc/[0-9]*/comm; do
      name=; read -r name < "$c" 2>/dev/null
      if [ "$name" = interactive ]; then p=${c%/comm}; break 2; fi
    done
    sleep 0.01; n=$((n + 1))
  done
  sleep 0.2; sed 's/^/TRACE-MAPS: /' "$p/maps" ) &
# runjob ends with `guestctl done`: print the trace first.
guestctl() {
  if [ "$1" = done ]; then
    echo 0 > $T/tracing_on
    echo "TRACE: overrun $(grep -h '^overrun' $T/per_cpu/cpu0/stats)"
    sed 's/^/TRACE-EV: /' $T/trace | grep -v '^TRACE-EV: #'
  fi
  command guestctl "$@"
}
