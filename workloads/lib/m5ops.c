/* gem5 pseudo-operations: see m5ops.h. */
#include "m5ops.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

static enum m5_form form = M5_FORM_ADDRESS;
static volatile uint8_t *page;

int m5_open(enum m5_form wanted)
{
	form = wanted;
	if (form == M5_FORM_INSTRUCTION || page)
		return 0;
	int fd = open("/dev/mem", O_RDWR | O_SYNC);
	if (fd < 0)
		return -errno;
	void *map = mmap(NULL, M5_ADDRESS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 M5_ADDRESS_BASE);
	int err = errno;
	close(fd);
	if (map == MAP_FAILED)
		return -err;
	page = map;
	return 0;
}

/* Pin the six arguments to their ABI registers around one instruction. */
#define M5_REGS(a)                                                           \
	register uint64_t rdi __asm__("rdi") = (a)[0];                       \
	register uint64_t rsi __asm__("rsi") = (a)[1];                       \
	register uint64_t rdx __asm__("rdx") = (a)[2];                       \
	register uint64_t rcx __asm__("rcx") = (a)[3];                       \
	register uint64_t r8 __asm__("r8") = (a)[4];                         \
	register uint64_t r9 __asm__("r9") = (a)[5]
#define M5_INPUTS "r"(rdi), "r"(rsi), "r"(rdx), "r"(rcx), "r"(r8), "r"(r9)

static uint64_t address_call(enum m5_op op, const uint64_t args[6])
{
	volatile uint8_t *where = page + ((uint64_t)op << 8);
	uint64_t result;
	M5_REGS(args);
	__asm__ volatile("movq (%[where]), %[result]"
			 : [result] "=a"(result)
			 : [where] "r"(where), M5_INPUTS
			 : "memory");
	return result;
}

/* The instruction form carries the op as an immediate, so one stub per op. */
#define M5_INSN(code)                                                        \
	static uint64_t insn_##code(const uint64_t args[6])                  \
	{                                                                    \
		uint64_t result;                                             \
		M5_REGS(args);                                               \
		__asm__ volatile(".byte 0x0f, 0x04\n\t.word " #code          \
				 : "=a"(result)                              \
				 : M5_INPUTS                                 \
				 : "memory");                                \
		return result;                                               \
	}
M5_INSN(0x21)
M5_INSN(0x22)
M5_INSN(0x40)
M5_INSN(0x41)
M5_INSN(0x42)
M5_INSN(0x43)
M5_INSN(0x4f)
M5_INSN(0x50)
M5_INSN(0x5a)
M5_INSN(0x5b)

static uint64_t instruction_call(enum m5_op op, const uint64_t args[6])
{
	switch (op) {
	case M5_EXIT: return insn_0x21(args);
	case M5_FAIL: return insn_0x22(args);
	case M5_RESET_STATS: return insn_0x40(args);
	case M5_DUMP_STATS: return insn_0x41(args);
	case M5_DUMP_RESET_STATS: return insn_0x42(args);
	case M5_CHECKPOINT: return insn_0x43(args);
	case M5_WRITE_FILE: return insn_0x4f(args);
	case M5_READ_FILE: return insn_0x50(args);
	case M5_WORK_BEGIN: return insn_0x5a(args);
	case M5_WORK_END: return insn_0x5b(args);
	}
	return (uint64_t)-1;
}

uint64_t m5_call(enum m5_op op, const uint64_t args[6])
{
	if (form == M5_FORM_INSTRUCTION)
		return instruction_call(op, args);
	return address_call(op, args);
}
