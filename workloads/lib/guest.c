/* The guest side of the study's protocol: see guest.h. */
#include "guest.h"
#include "m5ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Phase count, shared by every process of a job (scripts and workloads) through a
 * file in $RECLAIM_STATE_DIR, /run/reclaim in a guest. A native run without that
 * variable counts in-process and leaves nothing behind on the host. */
#define GUEST_STATE_DIR "/run/reclaim"

const char *guest_backend_name(enum guest_backend backend)
{
	switch (backend) {
	case BACKEND_GEM5: return "gem5";
	case BACKEND_QEMU: return "qemu";
	default: return "native";
	}
}

static enum guest_backend parse_backend(const char *name, size_t len)
{
	if (len == 4 && !strncmp(name, "gem5", 4))
		return BACKEND_GEM5;
	if (len == 4 && !strncmp(name, "qemu", 4))
		return BACKEND_QEMU;
	return BACKEND_NATIVE;
}

enum guest_backend guest_backend(void)
{
	const char *env = getenv("RECLAIM_BACKEND");
	if (env)
		return parse_backend(env, strlen(env));
	char line[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");
	if (!f)
		return BACKEND_NATIVE;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	const char *key = strstr(line, "reclaim.backend=");
	if (!key)
		return BACKEND_NATIVE;
	key += strlen("reclaim.backend=");
	return parse_backend(key, strcspn(key, " \n"));
}

double guest_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	size_t len = 0;
	if (fd < 0)
		return 0;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return len;
}

long long guest_vmstat(const char *name)
{
	static char buf[16384];
	size_t want = strlen(name);
	read_small_file("/proc/vmstat", buf, sizeof(buf));
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (!strncmp(line, name, want) && line[want] == ' ')
			return atoll(line + want + 1);
	}
	return -1;
}

static void write_all(const char *buf, size_t len)
{
	fflush(stdout);
	while (len) {
		ssize_t n = write(STDOUT_FILENO, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

/* "name value" lines as a JSON object of numbers. */
static size_t vmstat_json(char *out, size_t size)
{
	static char buf[16384];
	size_t len = snprintf(out, size, "{");
	read_small_file("/proc/vmstat", buf, sizeof(buf));
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *space = strchr(line, ' ');
		if (!space || len + 80 >= size)
			continue;
		*space = 0;
		len += snprintf(out + len, size - len, "%s\"%s\":%s", len > 1 ? "," : "", line,
				space + 1);
	}
	len += snprintf(out + len, size - len, "}");
	return len;
}

/* /proc/pressure/memory: {"some":{"avg10":..,"total":..},"full":{..}}, or null. */
static size_t psi_json(char *out, size_t size)
{
	char buf[512];
	if (!read_small_file("/proc/pressure/memory", buf, sizeof(buf)))
		return snprintf(out, size, "null");
	size_t len = snprintf(out, size, "{");
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind[8];
		double a10, a60, a300;
		unsigned long long total;
		if (sscanf(line, "%7s avg10=%lf avg60=%lf avg300=%lf total=%llu", kind, &a10, &a60,
			   &a300, &total) != 5)
			continue;
		len += snprintf(out + len, size - len,
				"%s\"%s\":{\"avg10\":%.2f,\"avg60\":%.2f,\"avg300\":%.2f,\"total_us\":%llu}",
				len > 1 ? "," : "", kind, a10, a60, a300, total);
	}
	len += snprintf(out + len, size - len, "}");
	return len;
}

/* How many phases this job has started; bumps it. */
static int next_phase_index(void)
{
	static int in_process;
	const char *dir = getenv("RECLAIM_STATE_DIR");
	if (!dir && guest_backend() == BACKEND_NATIVE)
		return in_process++;
	if (!dir)
		dir = GUEST_STATE_DIR;
	char path[512], buf[32] = "";
	snprintf(path, sizeof(path), "%s/phases", dir);
	int index = read_small_file(path, buf, sizeof(buf)) ? atoi(buf) : 0;
	mkdir(dir, 0755);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "%d\n", index + 1);
		fclose(f);
	}
	return index;
}

static void stats_boundary(int first)
{
	if (guest_backend() != BACKEND_GEM5)
		return;
	static const uint64_t none[6];
	if (m5_open(M5_FORM_ADDRESS) != 0) {
		fprintf(stderr, "guest: cannot map the m5 page through /dev/mem\n");
		return;
	}
	/* The first phase discards what came before it; later ones close the previous phase. */
	m5_call(first ? M5_RESET_STATS : M5_DUMP_RESET_STATS, none);
}

static void mark(const char *event, const char *name, int index)
{
	static char line[65536];
	/* Snapshot first, so the counters are those of the boundary itself. */
	size_t len = snprintf(line, sizeof(line),
			      GUEST_MARKER "{\"event\":\"%s\",\"name\":\"%s\",\"index\":%d,\"t\":%.6f,"
			      "\"vmstat\":", event, name, index, guest_now());
	len += vmstat_json(line + len, sizeof(line) - len);
	len += snprintf(line + len, sizeof(line) - len, ",\"psi\":");
	len += psi_json(line + len, sizeof(line) - len);
	len += snprintf(line + len, sizeof(line) - len, "}\n");
	stats_boundary(index == 0 && !strcmp(event, "phase"));
	write_all(line, len);
}

void guest_phase(const char *name)
{
	mark("phase", name, next_phase_index());
}

void guest_phases_done(void)
{
	mark("phases_done", "", next_phase_index());
}

static void append(struct guest_record *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(r->buf + r->len, sizeof(r->buf) - r->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(r->buf) - r->len)
		r->overflow = 1;
	else
		r->len += n;
}

static void append_string(struct guest_record *r, const char *s)
{
	append(r, "\"");
	for (; *s; s++) {
		unsigned char c = *s;
		if (c == '"' || c == '\\')
			append(r, "\\%c", c);
		else if (c < 0x20)
			append(r, "\\u%04x", c);
		else
			append(r, "%c", c);
	}
	append(r, "\"");
}

static void open_event(struct guest_record *r, const char *event, const char *workload)
{
	r->len = 0;
	r->overflow = 0;
	append(r, GUEST_MARKER "{\"event\":\"%s\",\"workload\":", event);
	append_string(r, workload);
}

void guest_record_begin(struct guest_record *r, const char *workload, const char *kind)
{
	open_event(r, "record", workload);
	append(r, ",\"kind\":");
	append_string(r, kind);
}

void guest_record_int(struct guest_record *r, const char *key, long long value)
{
	append(r, ",");
	append_string(r, key);
	append(r, ":%lld", value);
}

void guest_record_num(struct guest_record *r, const char *key, double value)
{
	append(r, ",");
	append_string(r, key);
	append(r, ":%.9g", value);
}

void guest_record_str(struct guest_record *r, const char *key, const char *value)
{
	append(r, ",");
	append_string(r, key);
	append(r, ":");
	append_string(r, value);
}

void guest_record_end(struct guest_record *r)
{
	if (r->overflow) {
		fprintf(stderr, "guest: record too long, dropped\n");
		return;
	}
	append(r, "}\n");
	write_all(r->buf, r->len);
}

void guest_fail(const char *workload, int status, const char *fmt, ...)
{
	char message[1024];
	struct guest_record r;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", workload, message);
	open_event(&r, "error", workload);
	append(&r, ",\"status\":%d,\"message\":", status);
	append_string(&r, message);
	guest_record_end(&r);
	exit(status);
}
