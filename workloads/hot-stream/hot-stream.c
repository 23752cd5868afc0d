/* hot-stream: seed 000's file-server experiment. preads of CHUNK pages at offset
 * i*STEP pages (110 and 100: 10% of the pages are read twice, "hot-10") over a file
 * larger than memory, while an interactive process with a mapped-executable working
 * set wakes every few milliseconds. Phases: begin (before the stream), stream,
 * restore (after it): the interactive process's own major faults per phase show how
 * much of its working set the stream pushed out. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wl.h"

#define NAME "hot-stream"
#define SPARSE "/var/tmp/hot-stream-sparse.bin"
#define DATA "/usr/share/reclaim/data/hot-stream"

static struct wl_opt opts[] = {
	{"file", WL_STR, DATA "/stream.bin", 0, 0, "the file streamed through (with --sparse-multiple=0)"},
	{"sparse-multiple", WL_NUM, "10", 0.0, 100.0, "stream a sparse file of this many times MemTotal instead (0: --file)"},
	{"chunk-pages", WL_INT, "110", 1, 4096, "pages per pread (the seed: 110)"},
	{"step-pages", WL_INT, "100", 1, 4096, "pages between the starts of reads (the seed: 100)"},
	{"app", WL_STR, DATA "/interactive", 0, 0, "the interactive program (a generated application)"},
	{"app-data", WL_STR, DATA "/interactive.dat", 0, 0, "its data file"},
	{"app-heap-mib", WL_INT, "2", 0, 1024, "its heap, MiB"},
	{"period-us", WL_INT, "5000", 500, 60000000, "its wake-up period (its idle time between touches)"},
	{"begin-ms", WL_INT, "100", 0, 100000, "length of the begin phase"},
	{"restore-ms", WL_INT, "200", 0, 10000, "length of the restore phase"},
	{NULL},
};

static int cmd_fd, reply_fd;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void end_app_phase(char command)
{
	char c;
	if (write(cmd_fd, &command, 1) != 1)
		guest_fail(NAME, 1, "the interactive process is gone (killed by the OOM killer?)");
	if (command == 'P' && (read(reply_fd, &c, 1) != 1 || c != 'D'))
		guest_fail(NAME, 1, "the interactive process did not answer");
}

static pid_t start_app(void)
{
	char heap[48], period[48], data[600], exe[512];
	snprintf(heap, sizeof(heap), "--heap-mib=%lld", wl_int(opts, "app-heap-mib"));
	snprintf(period, sizeof(period), "--period-us=%lld", wl_int(opts, "period-us"));
	snprintf(data, sizeof(data), "--data=%s", wl_str(opts, "app-data"));
	snprintf(exe, sizeof(exe), "%s", wl_str(opts, "app"));
	char *argv[] = {exe, "--mode=interactive", "--hot-percent=100", data, heap, period, NULL};
	pid_t pid = wl_spawn_app(argv, &cmd_fd, &reply_fd);
	char c;
	if (pid < 0 || read(reply_fd, &c, 1) != 1 || c != 'R')
		guest_fail(NAME, 2, "the interactive program '%s' did not start", exe);
	return pid;
}

int main(int argc, char **argv)
{
	wl_parse(NAME, opts, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	const char *path = wl_str(opts, "file");
	size_t chunk = wl_int(opts, "chunk-pages") * PAGE, step = wl_int(opts, "step-pages") * PAGE;
	double multiple = wl_num(opts, "sparse-multiple");
	int fd;
	if (multiple > 0) {
		/* As the seed's stream: a sparse file, so reading it costs page cache and
		 * CPU but no disk time, and it can be many times memory. Gone at exit. */
		path = SPARSE;
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		off_t size = (off_t)(multiple * wl_memtotal()) / PAGE * PAGE;
		if (fd < 0 || ftruncate(fd, size) != 0)
			guest_fail(NAME, 2, "cannot make the sparse file '%s'", path);
		unlink(path);
	} else {
		fd = open(path, O_RDONLY);
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		guest_fail(NAME, 2, "cannot open the file '%s'", path);
	if ((size_t)st.st_size < chunk)
		guest_fail(NAME, 2, "the file '%s' is smaller than one read (%zu KiB)", path, chunk / 1024);
	char *buf = malloc(chunk);
	wl_dirty_pages(buf, chunk, 0);

	pid_t app = start_app();
	struct guest_record r;
	struct wl_vm before, after;

	guest_phase("begin");
	wl_vm_read(&before);
	sleep_ms(wl_int(opts, "begin-ms"));
	end_app_phase('P');
	wl_vm_read(&after);
	guest_record_begin(&r, NAME, "phase");
	guest_record_str(&r, "phase", "begin");
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);

	guest_phase("stream");
	wl_vm_read(&before);
	double t0 = guest_now();
	long reads = 0;
	long long bytes = 0;
	for (off_t off = 0; off + (off_t)chunk <= st.st_size; off += step, reads++) {
		ssize_t n = pread(fd, buf, chunk, off);
		if (n != (ssize_t)chunk)
			guest_fail(NAME, 1, "short read at offset %lld of '%s'", (long long)off, path);
		bytes += n;
	}
	double seconds = guest_now() - t0;
	end_app_phase('P');
	wl_vm_read(&after);
	guest_record_begin(&r, NAME, "phase");
	guest_record_str(&r, "phase", "stream");
	guest_record_int(&r, "reads", reads);
	guest_record_int(&r, "file_mib", (long long)(st.st_size / MIB));
	guest_record_num(&r, "seconds", seconds);
	guest_record_num(&r, "mib_per_s", seconds > 0 ? bytes / (double)MIB / seconds : 0);
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);

	guest_phase("restore");
	wl_vm_read(&before);
	sleep_ms(wl_int(opts, "restore-ms"));
	end_app_phase('Q');
	int status;
	waitpid(app, &status, 0);
	wl_vm_read(&after);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		guest_fail(NAME, 1, "the interactive process ended badly (status %d)", status);
	guest_record_begin(&r, NAME, "phase");
	guest_record_str(&r, "phase", "restore");
	wl_vm_delta(&r, &before, &after);
	guest_record_end(&r);
	return 0;
}
