//go:build amd64 && !purego

#include "textflag.h"

// func classifyChunks(p *byte, chunks int, out *uint64)
//
// For each of chunks 64-byte chunks from p, writes four words to out: the
// bits of its quotes, of its backslashes and of its bytes below 0x20,
// bit k for byte k, and a zero word (see classifyChunksAVX2), with SSE2 (every amd64 has it): PCMPEQB marks the
// equal bytes of 16, PMOVMSKB packs their high bits, and four packs make
// a word. A byte is below 0x20 when its unsigned minimum with 0x1f is
// itself.
TEXT ·classifyChunks(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ chunks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ $0x2222222222222222, AX
	MOVQ AX, X13
	PUNPCKLQDQ X13, X13
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X14
	PUNPCKLQDQ X14, X14
	MOVQ $0x1f1f1f1f1f1f1f1f, AX
	MOVQ AX, X15
	PUNPCKLQDQ X15, X15
loop:
	TESTQ CX, CX
	JZ done
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVOU X0, X4
	PCMPEQB X13, X4
	PMOVMSKB X4, AX
	MOVOU X1, X4
	PCMPEQB X13, X4
	PMOVMSKB X4, BX
	MOVOU X2, X4
	PCMPEQB X13, X4
	PMOVMSKB X4, DX
	MOVOU X3, X4
	PCMPEQB X13, X4
	PMOVMSKB X4, R8
	SHLQ $16, BX
	SHLQ $32, DX
	SHLQ $48, R8
	ORQ BX, AX
	ORQ DX, AX
	ORQ R8, AX
	MOVQ AX, 0(DI)
	MOVOU X0, X4
	PCMPEQB X14, X4
	PMOVMSKB X4, AX
	MOVOU X1, X4
	PCMPEQB X14, X4
	PMOVMSKB X4, BX
	MOVOU X2, X4
	PCMPEQB X14, X4
	PMOVMSKB X4, DX
	MOVOU X3, X4
	PCMPEQB X14, X4
	PMOVMSKB X4, R8
	SHLQ $16, BX
	SHLQ $32, DX
	SHLQ $48, R8
	ORQ BX, AX
	ORQ DX, AX
	ORQ R8, AX
	MOVQ AX, 8(DI)
	MOVOU X0, X4
	PMINUB X15, X4
	PCMPEQB X0, X4
	PMOVMSKB X4, AX
	MOVOU X1, X4
	PMINUB X15, X4
	PCMPEQB X1, X4
	PMOVMSKB X4, BX
	MOVOU X2, X4
	PMINUB X15, X4
	PCMPEQB X2, X4
	PMOVMSKB X4, DX
	MOVOU X3, X4
	PMINUB X15, X4
	PCMPEQB X3, X4
	PMOVMSKB X4, R8
	SHLQ $16, BX
	SHLQ $32, DX
	SHLQ $48, R8
	ORQ BX, AX
	ORQ DX, AX
	ORQ R8, AX
	MOVQ AX, 16(DI)
	MOVQ $0, 24(DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JMP loop
done:
	RET


// The bytes " \\ / b f n r t, the simple escapes, by nibble: bit j is set
// in lo[l] and hi[h] for the j-th of them, whose low nibble is l and
// high nibble h, so a byte is one of them exactly when lo[its low
// nibble] AND hi[its high nibble] is not zero. Each table is there
// twice, once for each 16-byte lane of VPSHUFB.
DATA simpleLo<>+0x00(SB)/8, $0x0010008000490000
DATA simpleLo<>+0x08(SB)/8, $0x0220000400000000
DATA simpleLo<>+0x10(SB)/8, $0x0010008000490000
DATA simpleLo<>+0x18(SB)/8, $0x0220000400000000
GLOBL simpleLo<>(SB), RODATA|NOPTR, $32
DATA simpleHi<>+0x00(SB)/8, $0xc038040000030000
DATA simpleHi<>+0x08(SB)/8, $0x0000000000000000
DATA simpleHi<>+0x10(SB)/8, $0xc038040000030000
DATA simpleHi<>+0x18(SB)/8, $0x0000000000000000
GLOBL simpleHi<>(SB), RODATA|NOPTR, $32

// func classifyChunksAVX2(p *byte, chunks int, out *uint64)
//
// classifyChunks with AVX2: 32 bytes a compare, the three-operand forms
// keeping each chunk's two halves in registers without copies; and the
// fourth word marks the simple escapes, found with two table lookups a
// byte (VPSHUFB) on its two nibbles.
TEXT ·classifyChunksAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ chunks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ $0x22, AX
	MOVQ AX, X13
	VPBROADCASTB X13, Y13
	MOVQ $0x5c, AX
	MOVQ AX, X14
	VPBROADCASTB X14, Y14
	MOVQ $0x1f, AX
	MOVQ AX, X15
	VPBROADCASTB X15, Y15
	MOVQ $0x0f, AX
	MOVQ AX, X8
	VPBROADCASTB X8, Y8
	VMOVDQU simpleLo<>(SB), Y9
	VMOVDQU simpleHi<>(SB), Y10
	VPXOR Y11, Y11, Y11
loop:
	TESTQ CX, CX
	JZ done
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VPCMPEQB Y13, Y0, Y2
	VPCMPEQB Y13, Y1, Y3
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, 0(DI)
	VPCMPEQB Y14, Y0, Y4
	VPCMPEQB Y14, Y1, Y5
	VPMOVMSKB Y4, AX
	VPMOVMSKB Y5, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, 8(DI)
	VPMINUB Y15, Y0, Y6
	VPCMPEQB Y0, Y6, Y6
	VPMINUB Y15, Y1, Y7
	VPCMPEQB Y1, Y7, Y7
	VPMOVMSKB Y6, AX
	VPMOVMSKB Y7, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, 16(DI)
	VPAND Y8, Y0, Y2
	VPSRLW $4, Y0, Y3
	VPAND Y8, Y3, Y3
	VPSHUFB Y2, Y9, Y2
	VPSHUFB Y3, Y10, Y3
	VPAND Y2, Y3, Y2
	VPCMPEQB Y11, Y2, Y2
	VPAND Y8, Y1, Y4
	VPSRLW $4, Y1, Y5
	VPAND Y8, Y5, Y5
	VPSHUFB Y4, Y9, Y4
	VPSHUFB Y5, Y10, Y5
	VPAND Y4, Y5, Y4
	VPCMPEQB Y11, Y4, Y4
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y4, BX
	SHLQ $32, BX
	ORQ BX, AX
	NOTQ AX
	MOVQ AX, 24(DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JMP loop
done:
	VZEROUPPER
	RET
