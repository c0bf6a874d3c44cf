/* Area: aarch64 / branch protection (Aarch64BranchProtectionTests).
 * Purpose: the entry of a program built for BTI. Debian 12's C runtime start files are
 * unmarked and their _start has no landing pad, so a program linked with them and
 * -z force-bti faults at its first instruction (the loader enters it with br). Linked with
 * -nostartfiles and this file instead, the program is what a distribution built with
 * -mbranch-protection=standard makes: every page of it guarded, every way in padded.
 * What it does is glibc's start.S: __libc_start_main(main, argc, argv, 0, 0, rtld_fini,
 * stack_end), with no _init (there are no start files to provide one). */
    .text
    .globl _start
    .type _start, %function
_start:
    hint #34                        /* bti c */
    mov x29, #0                     /* the outermost frame record */
    mov x30, #0
    mov x5, x0                      /* rtld_fini, from the loader */
    ldr x1, [sp]                    /* argc */
    add x2, sp, #8                  /* argv */
    mov x6, sp                      /* stack_end */
    adrp x0, :got:main
    ldr x0, [x0, :got_lo12:main]
    mov x3, #0                      /* init, fini: none (glibc 2.34 runs the program's own constructors) */
    mov x4, #0
    bl __libc_start_main
    brk #1
    .size _start, . - _start

    .section .note.GNU-stack, "", %progbits
