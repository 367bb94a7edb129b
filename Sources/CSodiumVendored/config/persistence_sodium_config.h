/* What libsodium's configure script decides from the CPU, for the vendored build (persistence).
 *
 * SwiftPM compiles a C target with one set of flags per platform (Package.swift gives the operating system's
 * macros, HAVE_MMAP and the like, through `.when(platforms:)`), but a macOS universal build compiles the same target
 * for x86_64 and arm64, so whatever depends on the architecture is decided here, from the compiler's own macros.
 * private/common.h includes this file first (a one-line patch, listed in ../README.md); every file that uses the
 * macros below includes private/common.h.
 *
 * Only intrinsics and C are used: HAVE_AMD64_ASM and HAVE_AVX_ASM stay undefined, so the hand-written assembly
 * (salsa20 xmm6, curve25519 sandy2x, neither used by persistence) compiles to nothing and the C versions serve. The
 * CPU-specific files enable their own instruction sets with target pragmas, and sodium_init() picks an
 * implementation at run time (runtime.c), so these macros say only what the compiler can build, never what the
 * machine that runs the code has. */

#ifndef persistence_sodium_config_H
#define persistence_sodium_config_H 1

/* The build is configured: silences common.h's "undocumented method" warning. */
#ifndef CONFIGURED
# define CONFIGURED 1
#endif

/* 128-bit integers (Poly1305 donna64, curve25519 fe51): every 64-bit target; not watchOS's arm64_32. */
#if defined(__SIZEOF_INT128__)
# define HAVE_TI_MODE 1
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
# define NATIVE_BIG_ENDIAN 1
#else
# define NATIVE_LITTLE_ENDIAN 1
#endif

#if defined(__x86_64__) || defined(_M_X64)
/* The SSE2 … AVX-512 and AES-NI/PCLMUL code paths (AES-256-GCM, Argon2, BLAKE2b, ChaCha20, Poly1305), and CPUID to
 * choose among them. */
# define HAVE_CPUID 1
# define HAVE_MMINTRIN_H 1
# define HAVE_EMMINTRIN_H 1
# define HAVE_PMMINTRIN_H 1
# define HAVE_TMMINTRIN_H 1
# define HAVE_SMMINTRIN_H 1
# define HAVE_AVXINTRIN_H 1
# define HAVE_AVX2INTRIN_H 1
# define HAVE_AVX512FINTRIN_H 1
# define HAVE_WMMINTRIN_H 1
# define HAVE_RDRAND 1
/* XGETBV, which says whether the OS saves the AVX registers: without it runtime.c finds no AVX, and so no AVX2
 * (Argon2's fast path) and no AES-256-GCM (1.0.20's AES-NI code needs AVX: crypto_aead_aes256gcm_is_available()
 * returned 0 on every x86_64 CPU). configure gets it through HAVE_AVX_ASM, which would also turn the assembly on;
 * runtime.c (one line patched) takes the same inline XGETBV under this macro alone. */
# if defined(__GNUC__) || defined(__clang__)
#  define PERSISTENCE_XGETBV_ASM 1
# endif
#elif defined(__aarch64__) || defined(__arm64__)
/* ARMv8 crypto extensions: AES-256-GCM (and AEGIS) on arm64, chosen at run time where the CPU has them (always on
 * Apple silicon). */
# define HAVE_ARMCRYPTO 1
#endif

#endif
