# For `study run --workload make-grep --job-extra analysis/traces/make-grep-evictions.sh`:
# counts the page cache's pages added (read from disk) and deleted (evicted, or the
# make's objects overwritten) by file group: the make's sources and headers (src/), the
# grep's tree (scan/), the compiler (cc1), and all files. Counts only, as
# swap-write-requests.sh does: one tracefs instance per class with a filtered event, its
# entries and overruns counting every event, so a small buffer loses none. Printed at
# the job's end as "TRACE-COUNT: class n".
# Question it answers: which files does MGLRU (or the classic LRU without use-once) read
# back that the classic LRU with use-once keeps? The first reads of a group are the same
# under every policy of a repetition, so a difference in a group's adds is its re-reads.
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null
D=/usr/share/reclaim/data/make-grep
# A group is an inode range (the image writes each tree's files in one go); the range is
# checked to hold no other regular file of the data folder.
range() {
  find "$1" -type f -printf '%i\n' | sort -n | sed -n '1p;$p' | tr '\n' ' '
}
set -- $(range $D/src); src_lo=$1; src_hi=$2
set -- $(range $D/scan); scan_lo=$1; scan_hi=$2
cc1=$(stat -c %i $D/cc1)
echo "TRACE: src $src_lo-$src_hi ($(find $D/src -type f | wc -l) files)" \
  "scan $scan_lo-$scan_hi ($(find $D/scan -type f | wc -l) files) cc1 $cc1"
find $D -type f -printf '%i %p\n' | awk -v a=$src_lo -v b=$src_hi -v c=$scan_lo -v d=$scan_hi \
  '($1>=a && $1<=b && index($2,"/src/")==0) || ($1>=c && $1<=d && index($2,"/scan/")==0) \
   {print "TRACE: range holds another file: " $0}'
set -- \
  "src-add add_to_page_cache" "i_ino >= $src_lo && i_ino <= $src_hi" \
  "src-del delete_from_page_cache" "i_ino >= $src_lo && i_ino <= $src_hi" \
  "scan-add add_to_page_cache" "i_ino >= $scan_lo && i_ino <= $scan_hi" \
  "scan-del delete_from_page_cache" "i_ino >= $scan_lo && i_ino <= $scan_hi" \
  "cc1-add add_to_page_cache" "i_ino == $cc1" \
  "cc1-del delete_from_page_cache" "i_ino == $cc1" \
  "all-add add_to_page_cache" "" \
  "all-del delete_from_page_cache" ""
TRACE_CLASSES=
while [ $# -ge 2 ]; do
  name=${1% *}; event=mm_filemap_${1#* }; filter=$2; shift 2
  mkdir -p $T/instances/$name
  # 8 KiB a CPU: the counts live in the stats, not the buffer (a 64 MiB system)
  echo 8 > $T/instances/$name/buffer_size_kb
  if [ -n "$filter" ]; then
    echo "$filter" > $T/instances/$name/events/filemap/$event/filter || echo "TRACE: bad filter $name"
  fi
  echo 1 > $T/instances/$name/events/filemap/$event/enable
  TRACE_CLASSES="$TRACE_CLASSES $name"
done
echo "TRACE: counting$TRACE_CLASSES"
# runjob ends with `guestctl done`: print the counts first.
guestctl() {
  if [ "$1" = done ]; then
    for name in $TRACE_CLASSES; do
      stats=$T/instances/$name/per_cpu/cpu0/stats
      entries=$(sed -n 's/^entries: //p' $stats); overrun=$(sed -n 's/^overrun: //p' $stats)
      echo "TRACE-COUNT: $name $((entries + overrun))"
    done
  fi
  command guestctl "$@"
}
