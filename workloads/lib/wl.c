/* Helpers shared by the workloads: see wl.h. */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(const char *prog, const struct wl_opt *opts)
{
	printf("usage: %s [--name=value ...]\n", prog);
	for (const struct wl_opt *o = opts; o->name; o++) {
		if (o->type == WL_STR)
			printf("  --%-22s %s (default %s)\n", o->name, o->help, o->def);
		else
			printf("  --%-22s %s (default %s, %g..%g)\n", o->name, o->help, o->def,
			       o->min, o->max);
	}
}

static void set_value(const char *prog, struct wl_opt *o, const char *text)
{
	char *end;
	errno = 0;
	switch (o->type) {
	case WL_STR:
		o->s = text;
		return;
	case WL_INT:
		o->i = strtoll(text, &end, 10);
		o->d = (double)o->i;
		if (errno || *end || !*text || o->d < o->min || o->d > o->max)
			guest_fail(prog, 2, "bad --%s=%s: allowed an integer from %g to %g", o->name,
				   text, o->min, o->max);
		return;
	case WL_NUM:
		o->d = strtod(text, &end);
		if (errno || *end || !*text || o->d < o->min || o->d > o->max)
			guest_fail(prog, 2, "bad --%s=%s: allowed a number from %g to %g", o->name,
				   text, o->min, o->max);
		return;
	}
}

void wl_parse(const char *prog, struct wl_opt *opts, int argc, char **argv)
{
	for (struct wl_opt *o = opts; o->name; o++)
		set_value(prog, o, o->def);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(prog, opts);
			exit(0);
		}
		const char *eq = strchr(arg, '=');
		struct wl_opt *found = NULL;
		if (!strncmp(arg, "--", 2) && eq) {
			for (struct wl_opt *o = opts; o->name; o++)
				if (strlen(o->name) == (size_t)(eq - arg - 2) &&
				    !strncmp(arg + 2, o->name, eq - arg - 2))
					found = o;
		}
		if (!found)
			guest_fail(prog, 2, "unknown argument '%s' (--help lists the options)", arg);
		set_value(prog, found, eq + 1);
	}
}

static const struct wl_opt *find(const struct wl_opt *opts, const char *name)
{
	for (const struct wl_opt *o = opts; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	fprintf(stderr, "workload bug: no option '%s'\n", name);
	abort();
}

long long wl_int(const struct wl_opt *opts, const char *name) { return find(opts, name)->i; }
double wl_num(const struct wl_opt *opts, const char *name) { return find(opts, name)->d; }
const char *wl_str(const struct wl_opt *opts, const char *name) { return find(opts, name)->s; }

size_t wl_meminfo(const char *key)
{
	char line[256], name[64];
	size_t kib = 0, value;
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %zu kB", name, &value) == 2 && !strcmp(name, key)) {
			kib = value;
			break;
		}
	fclose(f);
	return kib * 1024;
}

size_t wl_memtotal(void) { return wl_meminfo("MemTotal"); }

size_t wl_size(long long mib, double fraction)
{
	size_t bytes = mib > 0 ? (size_t)mib * MIB : (size_t)(fraction * (double)wl_memtotal());
	return (bytes + PAGE - 1) / PAGE * PAGE;
}

uint64_t wl_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void wl_dirty_pages(void *p, size_t len, uint64_t value)
{
	for (size_t off = 0; off < len; off += PAGE)
		*(volatile uint64_t *)((char *)p + off) = value + off;
}

uint64_t wl_read_pages(const void *p, size_t len)
{
	uint64_t sum = 0;
	for (size_t off = 0; off < len; off += PAGE)
		sum += *(const volatile uint64_t *)((const char *)p + off);
	return sum;
}

long long wl_read_file(const char *path, size_t chunk)
{
	static char *buf;
	static size_t buf_size;
	if (buf_size < chunk) {
		free(buf);
		buf = malloc(chunk);
		buf_size = chunk;
	}
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long long total = 0;
	ssize_t n;
	while ((n = pread(fd, buf, chunk, total)) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : total;
}

int wl_write_random_file(const char *path, size_t bytes, uint64_t seed)
{
	static uint64_t block[1 << 13];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	while (bytes) {
		size_t n = bytes < sizeof(block) ? bytes : sizeof(block);
		for (size_t i = 0; i < n / 8 + 1 && i < sizeof(block) / 8; i++)
			block[i] = wl_rand(&seed);
		if (write(fd, block, n) != (ssize_t)n) {
			close(fd);
			return -1;
		}
		bytes -= n;
	}
	return close(fd);
}

pid_t wl_spawn_app(char *const argv[], int *cmd_fd, int *reply_fd)
{
	int cmd[2], reply[2];
	if (pipe(cmd) || pipe(reply))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(cmd[0], 0);
		dup2(reply[1], 3);
		close(cmd[1]);
		close(reply[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(cmd[0]);
	close(reply[1]);
	*cmd_fd = cmd[1];
	*reply_fd = reply[0];
	return pid;
}

void wl_vm_read(struct wl_vm *vm)
{
	vm->pgmajfault = guest_vmstat("pgmajfault");
	vm->pswpin = guest_vmstat("pswpin");
	vm->pswpout = guest_vmstat("pswpout");
	vm->pgactivate = guest_vmstat("pgactivate");
	vm->pgdeactivate = guest_vmstat("pgdeactivate");
	vm->refault_anon = guest_vmstat("workingset_refault_anon");
	vm->refault_file = guest_vmstat("workingset_refault_file");
	vm->activate_file = guest_vmstat("workingset_activate_file");
	vm->pglazyfree = guest_vmstat("pglazyfree");
	vm->pglazyfreed = guest_vmstat("pglazyfreed");
	vm->pgfault = guest_vmstat("pgfault");
	vm->nr_mapped = guest_vmstat("nr_mapped");
}

void wl_vm_delta(struct guest_record *r, const struct wl_vm *b, const struct wl_vm *a)
{
	guest_record_int(r, "d_pgmajfault", a->pgmajfault - b->pgmajfault);
	guest_record_int(r, "d_pswpin", a->pswpin - b->pswpin);
	guest_record_int(r, "d_pswpout", a->pswpout - b->pswpout);
	guest_record_int(r, "d_pgactivate", a->pgactivate - b->pgactivate);
	guest_record_int(r, "d_pgdeactivate", a->pgdeactivate - b->pgdeactivate);
	guest_record_int(r, "d_refault_anon", a->refault_anon - b->refault_anon);
	guest_record_int(r, "d_refault_file", a->refault_file - b->refault_file);
	guest_record_int(r, "d_activate_file", a->activate_file - b->activate_file);
	guest_record_int(r, "d_pglazyfree", a->pglazyfree - b->pglazyfree);
	guest_record_int(r, "d_pglazyfreed", a->pglazyfreed - b->pglazyfreed);
	guest_record_int(r, "d_pgfault", a->pgfault - b->pgfault);
	guest_record_int(r, "nr_mapped", a->nr_mapped);
}
