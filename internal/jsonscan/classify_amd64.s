//go:build amd64 && !purego

#include "textflag.h"

// func classifyChunks(p *byte, chunks int, out *uint64)
//
// For each of chunks 64-byte chunks from p, writes three words to out: the
// bits of its quotes, of its backslashes and of its bytes below 0x20,
// bit k for byte k, with SSE2 (every amd64 has it): PCMPEQB marks the
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
	ADDQ $64, SI
	ADDQ $24, DI
	DECQ CX
	JMP loop
done:
	RET


// func classifyChunksAVX2(p *byte, chunks int, out *uint64)
//
// classifyChunks with AVX2: 32 bytes a compare, and the three-operand
// forms keep each chunk's two halves in registers without copies.
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
	ADDQ $64, SI
	ADDQ $24, DI
	DECQ CX
	JMP loop
done:
	VZEROUPPER
	RET
