/* The bulk of an application's text: NPAGES page-aligned functions, each a `ret`
 * padded to a full page. Calling one faults in exactly one file-backed VM_EXEC page
 * at the cost of two instructions. NPAGES comes from the build (--defsym). Built
 * with -DTOOLKIT_LIB it is instead the desktop's shared library (tk_pages), which
 * ld.so maps PROT_EXEC into every application linked against it. */
/* Named here: without it the assembler names the object after gcc's temporary file
 * (ccXXXXXX.o), and every build of an application differed in those bytes. */
	.file "pages.S"
#ifdef TOOLKIT_LIB
#define PAGES_SYM tk_pages
#define NPAGES_SYM tk_npages
#else
#define PAGES_SYM app_pages
#define NPAGES_SYM app_npages
#endif
	.section .text.app_pages,"ax",@progbits
	.globl PAGES_SYM
	.globl NPAGES_SYM
	.type PAGES_SYM, @function
	.p2align 12
PAGES_SYM:
	.rept NPAGES
	ret
	.fill 4095, 1, 0xcc
	.endr
	.section .rodata
	.p2align 3
	.type NPAGES_SYM, @object
	.size NPAGES_SYM, 8
NPAGES_SYM:
	.quad NPAGES
	.section .note.GNU-stack,"",@progbits
