/* make-grep-cpu: seed 003's experiment in the seed's regime. The make is CPU-bound as
 * the seed's was (alone it kept a CPU 92% busy): for each of its first --units units it
 * runs a compiler (DATA-DIR/cc1, cc1/cc1.c: its text, 2% of memory, runs in full; it
 * reads the unit and a few shared headers and computes, --compile-work steps through
 * its working memory per KiB read), and the grep reads a tree of source-sized files
 * (4-32 KiB, as `grep -r /usr/src` met), larger than memory, once. Use-once keeps the
 * scan's pages from pushing out the headers and the compiler.
 * --jobs=make or grep runs one job alone, to measure each without the other.
 * --generate-data=DIR writes both trees (on the host, at image build). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"

#define NAME "make-grep-cpu"
#define READ_CHUNK (64 * 1024)
#define SCAN_PER_DIR 100 /* files in each scan/dNNN */

static struct wl_opt opts[] = {
	{"data-dir", WL_STR, "/usr/share/reclaim/data/make-grep-cpu", 0, 0, "where src/, scan/ and cc1 are"},
	{"out-dir", WL_STR, "/var/tmp/make-grep-cpu", 0, 0, "where the make writes its objects (a disk, not tmpfs)"},
	{"make-passes", WL_INT, "1", 1, 20, "times the make compiles its units"},
	{"units", WL_INT, "5", 1, 1000, "units each make pass compiles (the first ones of src/units)"},
	{"includes", WL_INT, "4", 0, 32, "headers each unit reads"},
	{"compile-heap-mib", WL_INT, "2", 1, 64, "working memory each compile walks, MiB"},
	{"compile-work", WL_INT, "25000", 0, 100000, "the compiler's compute: steps through its working memory per KiB of unit and headers it reads"},
	{"scan-percent", WL_INT, "75", 1, 100, "percent of the scan tree the grep reads (its first directories)"},
	{"jobs", WL_STR, "both", 0, 0, "both, make (alone) or grep (alone)"},
	{"seed", WL_INT, "1", 0, 1000000, "chooses each unit's headers"},
	{"generate-data", WL_STR, "", 0, 0, "write src/ and scan/ into this directory and exit"},
	{"memory-mib", WL_INT, "256", 16, 1 << 20, "with --generate-data: the machine's memory, which sizes the trees"},
	{NULL},
};

static char *buf;

static long count_files(const char *dir)
{
	long n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Read a file, hashing one word per 64 bytes (grep's matching); bytes, or -1. */
static long long read_hash(const char *path, uint64_t *hash)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long long total = 0;
	ssize_t n;
	while ((n = read(fd, buf, READ_CHUNK)) > 0) {
		for (ssize_t i = 0; i + 8 <= n; i += 64)
			*hash = (*hash ^ *(uint64_t *)(buf + i)) * 0x100000001b3ULL;
		total += n;
	}
	close(fd);
	return n < 0 ? -1 : total;
}

static double cpu_seconds(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* One job's record: its time, what it read, its major faults and CPU time (its
 * children's included: a make's compilers, as time(1) counts them). */
static void job_record(const char *job, double seconds, long long files, long long bytes,
		       long compiles)
{
	struct rusage self, children;
	struct guest_record r;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	guest_record_begin(&r, NAME, job);
	guest_record_num(&r, "seconds", seconds);
	guest_record_int(&r, "files", files);
	guest_record_int(&r, "mib", bytes / MIB);
	guest_record_int(&r, "majflt", self.ru_majflt + children.ru_majflt);
	guest_record_num(&r, "cpu_s", cpu_seconds(&self) + cpu_seconds(&children));
	if (compiles >= 0) {
		guest_record_int(&r, "compiles", compiles);
		guest_record_num(&r, "compile_cpu_s", cpu_seconds(&children));
	}
	guest_record_end(&r);
}

static int make_job(const char *root, const char *out)
{
	char units[1024], headers[1024], path[1200];
	snprintf(units, sizeof(units), "%s/src/units", root);
	snprintf(headers, sizeof(headers), "%s/src/include", root);
	long nunits = count_files(units), nheaders = count_files(headers);
	if (nunits <= 0 || nheaders <= 0)
		guest_fail(NAME, 2, "no units or headers under '%s/src'", root);
	if (wl_int(opts, "units") > nunits)
		guest_fail(NAME, 2, "bad --units=%lld: the tree has %ld units", wl_int(opts, "units"),
			   nunits);
	nunits = wl_int(opts, "units");
	mkdir(out, 0755);
	uint64_t seed = wl_int(opts, "seed");
	long long files = 0, bytes = 0;
	double t0 = guest_now();
	char compiler[1024], unit[1200], includes[8192], object[1200], heap[48], work[48];
	snprintf(compiler, sizeof(compiler), "%s/cc1", root);
	snprintf(heap, sizeof(heap), "--heap-mib=%lld", wl_int(opts, "compile-heap-mib"));
	snprintf(work, sizeof(work), "--compile-work=%lld", wl_int(opts, "compile-work"));
	long compiles = 0;
	for (long pass = 0; pass < wl_int(opts, "make-passes"); pass++) {
		for (long u = 0; u < nunits; u++) {
			snprintf(unit, sizeof(unit), "--data=%s/u%05ld.c", units, u);
			snprintf(object, sizeof(object), "--out=%s/u%05ld.o", out, u);
			int at = snprintf(includes, sizeof(includes), "--includes=");
			for (long h = 0; h < wl_int(opts, "includes"); h++) {
				snprintf(path, sizeof(path), "%s/h%04lu.h", headers,
					 (unsigned long)(wl_rand(&seed) % nheaders));
				at += snprintf(includes + at, sizeof(includes) - at, "%s%s", h ? "," : "", path);
				struct stat st;
				bytes += stat(path, &st) == 0 ? st.st_size : 0;
				files++;
			}
			struct stat st;
			bytes += stat(unit + 7, &st) == 0 ? st.st_size : 0;
			files++;
			char *argv[] = {compiler, unit, includes, heap, work, object, NULL};
			pid_t pid = fork();
			if (pid == 0) {
				execv(compiler, argv);
				_exit(127);
			}
			int status;
			if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0)
				guest_fail(NAME, 1, "make: the compiler '%s' failed on unit %ld", compiler, u);
			compiles++;
		}
	}
	job_record("make", guest_now() - t0, files, bytes, compiles);
	return 0;
}

static int grep_job(const char *root)
{
	char scan[1024], dir[1100], path[1200];
	snprintf(scan, sizeof(scan), "%s/scan", root);
	long ndirs = count_files(scan);
	if (ndirs <= 0)
		guest_fail(NAME, 2, "no scan tree under '%s'", scan);
	ndirs = (ndirs * wl_int(opts, "scan-percent") + 99) / 100;
	long long files = 0, bytes = 0;
	uint64_t hash = 0;
	double t0 = guest_now();
	for (long d = 0; d < ndirs; d++) {
		snprintf(dir, sizeof(dir), "%s/d%03ld", scan, d);
		long n = count_files(dir);
		for (long f = 0; f < n; f++) {
			snprintf(path, sizeof(path), "%s/f%04ld.c", dir, f);
			long long m = read_hash(path, &hash);
			if (m < 0)
				guest_fail(NAME, 1, "grep: cannot read '%s'", path);
			bytes += m;
			files++;
		}
	}
	job_record("grep", guest_now() - t0, files, bytes, -1);
	return 0;
}

static void write_tree(const char *dir, const char *fmt, long count, size_t min_kib,
		       size_t max_kib, uint64_t *seed, size_t *left)
{
	char path[1200];
	if (mkdir(dir, 0755) && errno != EEXIST)
		guest_fail(NAME, 1, "cannot create '%s'", dir);
	for (long i = 0; i < count && *left; i++) {
		size_t kib = min_kib + wl_rand(seed) % (max_kib - min_kib + 1);
		size_t bytes = kib * 1024 < *left ? kib * 1024 : *left;
		int at = snprintf(path, sizeof(path), "%s/", dir);
		snprintf(path + at, sizeof(path) - at, fmt, i);
		if (wl_write_random_file(path, bytes, wl_rand(seed)))
			guest_fail(NAME, 1, "cannot write '%s'", path);
		*left -= bytes;
	}
}

/* src/include: 10% of memory of 16-32 KiB headers; src/units: 20% of 32-96 KiB units
 * (make-grep's source tree); scan/dNNN: twice memory of 4-32 KiB files, 100 to a
 * directory, so --scan-percent from 50 reads 1-2x memory. */
static int generate(const char *root, size_t memory)
{
	char a[1000], b[1100];
	uint64_t seed = 42;
	mkdir(root, 0755);
	snprintf(a, sizeof(a), "%s/src", root);
	mkdir(a, 0755);
	size_t left = memory / 10;
	snprintf(a, sizeof(a), "%s/src/include", root);
	write_tree(a, "h%04ld.h", 100000, 16, 32, &seed, &left);
	left = memory / 5;
	snprintf(a, sizeof(a), "%s/src/units", root);
	write_tree(a, "u%05ld.c", 100000, 32, 96, &seed, &left);
	left = memory * 2;
	snprintf(a, sizeof(a), "%s/scan", root);
	mkdir(a, 0755);
	for (long d = 0; left; d++) {
		snprintf(b, sizeof(b), "%s/d%03ld", a, d);
		write_tree(b, "f%04ld.c", SCAN_PER_DIR, 4, 32, &seed, &left);
	}
	return 0;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	const char *jobs = wl_str(opts, "jobs");
	if (strcmp(jobs, "both") && strcmp(jobs, "make") && strcmp(jobs, "grep"))
		guest_fail(NAME, 2, "bad --jobs=%s: allowed both, make, grep", jobs);
	int run_make = strcmp(jobs, "grep") != 0, run_grep = strcmp(jobs, "make") != 0;
	buf = malloc(READ_CHUNK);
	if (*wl_str(opts, "generate-data"))
		return generate(wl_str(opts, "generate-data"), wl_int(opts, "memory-mib") * MIB);
	const char *root = wl_str(opts, "data-dir");
	char path[1100];
	struct stat st;
	snprintf(path, sizeof(path), "%s/scan", root);
	if (stat(path, &st))
		guest_fail(NAME, 2, "no src/ and scan/ trees under '%s'", root);

	struct wl_vm before, after;
	struct guest_record r;
	guest_phase("run");
	wl_vm_read(&before);
	double t0 = guest_now();
	if (run_make && fork() == 0)
		_exit(make_job(root, wl_str(opts, "out-dir")));
	if (run_grep && fork() == 0)
		_exit(grep_job(root));
	int failed = 0, status;
	for (int i = 0; i < run_make + run_grep; i++) {
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	wl_vm_read(&after);
	if (failed)
		guest_fail(NAME, 1, "%d of the %d jobs failed (--jobs=%s)", failed, run_make + run_grep,
			   jobs);
	guest_record_begin(&r, NAME, "summary");
	guest_record_num(&r, "seconds", guest_now() - t0);
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);
	return 0;
}
