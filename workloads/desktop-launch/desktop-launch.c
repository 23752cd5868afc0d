/* desktop-launch: seed 000's desktop experiment. Start generated applications one by
 * one; after each start, switch to every application already open (each touches its
 * hot code, data and heap, as a window brought to the front would). The applications
 * share a library's code (libtoolkit.so), as GTK/X programs did; their total footprint
 * exceeds memory, and so do their hot sets together, so reclaim and swap decide how
 * long starts and switches take. Each step (a start and its switches) is a phase of
 * its own, so gem5 gives a stats block per step. Records the seed's "progress
 * timing": cumulative time after each start. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"

#define NAME "desktop-launch"
#define MAX_APPS 64

static struct wl_opt opts[] = {
	{"apps", WL_INT, "16", 1, 48, "applications to start (the image has 48)"},
	{"app-dir", WL_STR, "/usr/share/reclaim/data/desktop-launch", 0, 0, "where app-NN and app-NN.dat are"},
	{"footprint-fraction", WL_NUM, "1.5", 0.2, 4.0, "total footprint (code + data + heaps) as a fraction of MemTotal"},
	{"heap-mib", WL_INT, "0", 0, 1 << 16, "heap per application, MiB (0: from --footprint-fraction)"},
	{"hot-percent", WL_INT, "25", 1, 100, "percent of an application's pages touched per switch"},
	{"seed", WL_INT, "1", 0, 1000000, "chooses each application's hot pages"},
	{NULL},
};

struct running {
	pid_t pid;
	int cmd, reply;
};

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* A process's major faults so far (/proc/PID/stat, field 12). */
static long long majflt_of(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	long long value = -1;
	for (int field = 2; p && field < 12; field++)
		p = strchr(p + 1, ' ');
	if (p)
		value = strtoll(p + 1, NULL, 10);
	return value;
}

static void wait_reply(struct running *r, int id, char want)
{
	char c;
	if (read(r->reply, &c, 1) != 1 || c != want)
		guest_fail(NAME, 1, "application %d died (killed by the OOM killer?)", id);
}

static struct running launch(const char *dir, int id, long long heap_mib, long long hot, long long seed)
{
	char exe[512], data[512], a_id[32], a_data[560], a_heap[48], a_hot[48], a_seed[48];
	snprintf(exe, sizeof(exe), "%s/app-%02d", dir, id);
	snprintf(data, sizeof(data), "%s/app-%02d.dat", dir, id);
	snprintf(a_id, sizeof(a_id), "--id=%d", id);
	snprintf(a_data, sizeof(a_data), "--data=%s", data);
	snprintf(a_heap, sizeof(a_heap), "--heap-mib=%lld", heap_mib);
	snprintf(a_hot, sizeof(a_hot), "--hot-percent=%lld", hot);
	snprintf(a_seed, sizeof(a_seed), "--seed=%lld", seed * 1000 + id);
	char *argv[] = {exe, "--mode=window", a_id, a_data, a_heap, a_hot, a_seed, NULL};
	struct running r;
	r.pid = wl_spawn_app(argv, &r.cmd, &r.reply);
	if (r.pid < 0)
		guest_fail(NAME, 1, "cannot start application %d", id);
	return r;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	const char *dir = wl_str(opts, "app-dir");
	int found = 0;
	size_t code_data = 0;
	char path[512];
	for (int i = 1; i <= MAX_APPS; i++) {
		snprintf(path, sizeof(path), "%s/app-%02d", dir, i);
		off_t exe = file_size(path);
		snprintf(path, sizeof(path), "%s/app-%02d.dat", dir, i);
		off_t dat = file_size(path);
		if (exe < 0 || dat < 0)
			break;
		found = i;
		code_data += exe + dat;
	}
	int napps = (int)wl_int(opts, "apps");
	if (found == 0)
		guest_fail(NAME, 2, "no applications (app-01, app-01.dat, ...) in '%s'", dir);
	if (napps > found)
		guest_fail(NAME, 2, "bad --apps=%d: '%s' has %d applications", napps, dir, found);
	long long heap = wl_int(opts, "heap-mib");
	if (heap == 0) {
		double target = wl_num(opts, "footprint-fraction") * wl_memtotal();
		snprintf(path, sizeof(path), "%s/libtoolkit.so", dir);
		off_t shared = file_size(path); /* counted once: every application maps it */
		double per_app = (target - (shared > 0 ? shared : 0)
				  - (double)code_data * napps / found) / napps;
		heap = per_app > MIB ? (long long)(per_app / MIB) : 1;
	}

	struct running apps[MAX_APPS];
	struct guest_record r;
	struct wl_vm start, before, after;
	guest_phase("launch-01");
	wl_vm_read(&start);
	double t_start = guest_now();
	for (int i = 1; i <= napps; i++) {
		char phase[32];
		snprintf(phase, sizeof(phase), "launch-%02d", i);
		if (i > 1)
			guest_phase(phase);
		wl_vm_read(&before);
		double t0 = guest_now();
		apps[i - 1] = launch(dir, i, heap, wl_int(opts, "hot-percent"), wl_int(opts, "seed"));
		wait_reply(&apps[i - 1], i, 'R');
		double launched = guest_now();
		long long launch_faults = majflt_of(apps[i - 1].pid);
		for (int j = 1; j < i; j++) {
			long long faults = majflt_of(apps[j - 1].pid);
			double s0 = guest_now();
			if (write(apps[j - 1].cmd, "S", 1) != 1)
				guest_fail(NAME, 1, "application %d is gone", j);
			wait_reply(&apps[j - 1], j, 'D');
			double seconds = guest_now() - s0;
			guest_record_begin(&r, NAME, "switch");
			guest_record_int(&r, "step", i);
			guest_record_int(&r, "app", j);
			guest_record_num(&r, "seconds", seconds);
			guest_record_int(&r, "majflt", majflt_of(apps[j - 1].pid) - faults);
			guest_record_end(&r);
		}
		double now = guest_now();
		wl_vm_read(&after);
		guest_record_begin(&r, NAME, "step");
		guest_record_int(&r, "step", i);
		guest_record_num(&r, "launch_s", launched - t0);
		guest_record_int(&r, "launch_majflt", launch_faults);
		guest_record_num(&r, "switch_s", now - launched);
		guest_record_num(&r, "cumulative_s", now - t_start);
		wl_vm_delta(&r, &before, &after);
		guest_record_end(&r);
	}
	double total = guest_now() - t_start;
	wl_vm_read(&after);
	guest_phase("close");
	for (int i = 0; i < napps; i++) {
		if (write(apps[i].cmd, "Q", 1) != 1) { /* already gone: waitpid tells */ }
		close(apps[i].cmd);
	}
	int failed = 0;
	for (int i = 0; i < napps; i++) {
		int status;
		waitpid(apps[i].pid, &status, 0);
		failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	if (failed)
		guest_fail(NAME, 1, "%d application(s) did not exit cleanly", failed);
	guest_record_begin(&r, NAME, "summary");
	guest_record_int(&r, "apps", napps);
	guest_record_int(&r, "heap_mib", heap);
	guest_record_int(&r, "code_data_mib", (long long)(code_data / MIB));
	guest_record_num(&r, "total_s", total);
	wl_vm_delta(&r, &start, &after);
	guest_record_end(&r);
	return 0;
}
