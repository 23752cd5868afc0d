/* make-grep: seed 003's experiment. A make (for each unit it runs a compiler: an
 * executable whose text all runs, which reads the unit and a few shared headers,
 * dirties its working memory, computes and writes an object file; the compiler's text
 * and the headers are used again and again) runs at the same time as a one-pass
 * grep-like scan over a tree larger than memory. Use-once keeps the scan's pages from
 * pushing out the headers and the compiler.
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

#define NAME "make-grep"
#define READ_CHUNK (64 * 1024)

static struct wl_opt opts[] = {
	{"data-dir", WL_STR, "/usr/share/reclaim/data/make-grep", 0, 0, "where src/ and scan/ are"},
	{"out-dir", WL_STR, "/var/tmp/make-grep", 0, 0, "where the compile job writes its objects (a disk, not tmpfs)"},
	{"make-passes", WL_INT, "2", 1, 20, "times the compile job builds every unit"},
	{"includes", WL_INT, "4", 0, 32, "headers each unit reads"},
	{"compiler", WL_STR, "", 0, 0, "the compiler executable (default: DATA-DIR/cc1)"},
	{"compile-heap-mib", WL_INT, "2", 0, 64, "working memory each compile dirties, MiB"},
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

/* Read a file, hashing one word per 64 bytes ("compute"); returns bytes or -1. */
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

static void child_record(const char *job, double seconds, long long files, long long bytes)
{
	struct rusage ru;
	struct guest_record r;
	getrusage(RUSAGE_SELF, &ru);
	guest_record_begin(&r, NAME, job);
	guest_record_num(&r, "seconds", seconds);
	guest_record_int(&r, "files", files);
	guest_record_int(&r, "mib", bytes / MIB);
	guest_record_int(&r, "majflt", ru.ru_majflt);
	guest_record_end(&r);
}

static int make_job(const char *src, const char *out)
{
	char units[1024], headers[1024], path[1200];
	snprintf(units, sizeof(units), "%s/units", src);
	snprintf(headers, sizeof(headers), "%s/include", src);
	long nunits = count_files(units), nheaders = count_files(headers);
	if (nunits <= 0 || nheaders <= 0)
		guest_fail(NAME, 2, "no units or headers under '%s'", src);
	mkdir(out, 0755);
	uint64_t seed = wl_int(opts, "seed");
	long long files = 0, bytes = 0;
	double t0 = guest_now();
	char compiler[1024], unit[1200], includes[8192], object[1200], heap[48];
	snprintf(compiler, sizeof(compiler), "%s", *wl_str(opts, "compiler") ?
		 wl_str(opts, "compiler") : "");
	if (!*compiler)
		snprintf(compiler, sizeof(compiler), "%s/../cc1", src);
	snprintf(heap, sizeof(heap), "--heap-mib=%lld", wl_int(opts, "compile-heap-mib"));
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
			char *argv[] = {compiler, "--mode=compile", unit, includes, heap, object, NULL};
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
	struct rusage children;
	getrusage(RUSAGE_CHILDREN, &children);
	struct guest_record r;
	guest_record_begin(&r, NAME, "make");
	guest_record_num(&r, "seconds", guest_now() - t0);
	guest_record_int(&r, "files", files);
	guest_record_int(&r, "mib", bytes / MIB);
	guest_record_int(&r, "compiles", compiles);
	/* The make's own faults and its compilers' (as time(1) counts a make's). */
	struct rusage self;
	getrusage(RUSAGE_SELF, &self);
	guest_record_int(&r, "majflt", self.ru_majflt + children.ru_majflt);
	guest_record_num(&r, "compile_cpu_s", children.ru_utime.tv_sec + children.ru_utime.tv_usec / 1e6 +
			 children.ru_stime.tv_sec + children.ru_stime.tv_usec / 1e6);
	guest_record_end(&r);
	return 0;
}

static int grep_job(const char *scan)
{
	long ndirs = count_files(scan);
	if (ndirs <= 0)
		guest_fail(NAME, 2, "no scan tree under '%s'", scan);
	long long files = 0, bytes = 0;
	uint64_t hash = 0;
	double t0 = guest_now();
	char dir[1024], path[1400];
	for (long d = 0; d < ndirs; d++) {
		snprintf(dir, sizeof(dir), "%s/d%03ld", scan, d);
		long n = count_files(dir);
		for (long f = 0; f < n; f++) {
			snprintf(path, sizeof(path), "%s/f%04ld", dir, f);
			long long m = read_hash(path, &hash);
			if (m < 0)
				guest_fail(NAME, 1, "grep: cannot read '%s'", path);
			bytes += m;
			files++;
		}
	}
	child_record("grep", guest_now() - t0, files, bytes);
	return 0;
}

static void write_tree(const char *dir, const char *prefix, const char *fmt, long count,
		       size_t min_kib, size_t max_kib, uint64_t *seed, size_t *left)
{
	char path[1200];
	if (mkdir(dir, 0755) && errno != EEXIST)
		guest_fail(NAME, 1, "cannot create '%s'", dir);
	for (long i = 0; i < count && *left; i++) {
		size_t kib = min_kib + wl_rand(seed) % (max_kib - min_kib + 1);
		size_t bytes = kib * 1024 < *left ? kib * 1024 : *left;
		snprintf(path, sizeof(path), "%s/%s", dir, prefix);
		snprintf(path + strlen(path), sizeof(path) - strlen(path), fmt, i);
		if (wl_write_random_file(path, bytes, wl_rand(seed)))
			guest_fail(NAME, 1, "cannot write '%s'", path);
		*left -= bytes;
	}
}

/* src/include: 10% of memory of 16-32 KiB headers; src/units: 20% of 32-96 KiB units;
 * scan/dNNN: 150% of memory of 64-512 KiB files, 100 per directory. */
static int generate(const char *root, size_t memory)
{
	char a[700], b[800];
	uint64_t seed = 42;
	mkdir(root, 0755);
	snprintf(a, sizeof(a), "%s/src", root);
	mkdir(a, 0755);
	size_t left = memory / 10;
	snprintf(a, sizeof(a), "%s/src/include", root);
	write_tree(a, "h", "%04ld.h", 100000, 16, 32, &seed, &left);
	left = memory / 5;
	snprintf(a, sizeof(a), "%s/src/units", root);
	write_tree(a, "u", "%05ld.c", 100000, 32, 96, &seed, &left);
	left = memory * 3 / 2;
	snprintf(a, sizeof(a), "%s/scan", root);
	mkdir(a, 0755);
	for (long d = 0; left; d++) {
		snprintf(b, sizeof(b), "%s/d%03ld", a, d);
		write_tree(b, "f", "%04ld", 100, 64, 512, &seed, &left);
	}
	return 0;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	buf = malloc(READ_CHUNK);
	const char *root = wl_str(opts, "data-dir");
	if (*wl_str(opts, "generate-data"))
		return generate(wl_str(opts, "generate-data"), wl_int(opts, "memory-mib") * MIB);
	char src[900], scan[900];
	snprintf(src, sizeof(src), "%s/src", root);
	snprintf(scan, sizeof(scan), "%s/scan", root);
	struct stat st;
	if (stat(src, &st) || stat(scan, &st))
		guest_fail(NAME, 2, "no src/ and scan/ trees under '%s'", root);

	struct wl_vm before, after;
	struct guest_record r;
	guest_phase("run");
	wl_vm_read(&before);
	double t0 = guest_now();
	pid_t make = fork();
	if (make == 0)
		_exit(make_job(src, wl_str(opts, "out-dir")));
	pid_t grep = fork();
	if (grep == 0)
		_exit(grep_job(scan));
	int failed = 0, status;
	for (int i = 0; i < 2; i++) {
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	wl_vm_read(&after);
	if (failed)
		guest_fail(NAME, 1, "%d of the make and grep jobs failed", failed);
	guest_record_begin(&r, NAME, "summary");
	guest_record_num(&r, "seconds", guest_now() - t0);
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);
	return 0;
}
