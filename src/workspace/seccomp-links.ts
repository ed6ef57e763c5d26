/*
 * A seccomp filter (classic BPF, as bubblewrap's `--seccomp FD` loads it) that makes link(2) and linkat(2)
 * fail with EXDEV in a command. A hard link made by a command to a file that existed before is not a new
 * file: nothing born while the command ran names it, so the quota could not take it back (ADR 0038). EXDEV
 * ("cross-device link") rather than EPERM because tools that link for speed (git's local clone, package
 * managers) treat it as "copy instead", and a copy is a new file the quota sees. Symbolic links are
 * unaffected. io_uring_setup(2) fails with ENOSYS (as on a kernel without it; its users fall back to plain
 * calls): an io_uring's LINKAT is not a system call, so no seccomp filter would see it. Written by hand: the program is a dozen instructions, and libseccomp has no maintained
 * binding for Node.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_ALU_AND_K = 0x54;
const BPF_RET_K = 0x06;
/** Offsets in `struct seccomp_data`. */
const NR = 0;
const ARCH = 4;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EXDEV = 18;
const ENOSYS = 38;

interface Abi {
  audit: number;
  /** The numbers of link and linkat (link is absent on arm64). */
  calls: number[];
  /** The number of io_uring_setup. */
  ioUringSetup: number;
  /** Bits of the number to clear first (x32 calls on x86_64 carry 0x40000000 and share the x86_64 numbers). */
  mask?: number;
}

/** Per host architecture, every ABI a process there can call the kernel with (compat ABIs included). */
const ABIS: Partial<Record<NodeJS.Architecture, Abi[]>> = {
  x64: [
    { audit: 0xc000003e, calls: [86, 265], ioUringSetup: 425, mask: 0xbfffffff },
    { audit: 0x40000003, calls: [9, 303], ioUringSetup: 425 },
  ],
  arm64: [
    { audit: 0xc00000b7, calls: [37], ioUringSetup: 425 },
    { audit: 0x40000028, calls: [9, 328], ioUringSetup: 425 },
  ],
};

type Instruction = [code: number, jt: number, jf: number, k: number];

/**
 * The filter for `arch`, or null where it is not known (commands there may link: documented). Layout:
 * `ld arch`, then per ABI `jeq arch` (else on to the next ABI), `ld nr`, an optional mask, one `jeq` per
 * link call (match: EXDEV) and one for io_uring_setup (match: ENOSYS), then `ret allow`, `ret errno(EXDEV)`
 * and `ret errno(ENOSYS)`. Jumps count the instructions skipped.
 */
export function linkFilter(arch: NodeJS.Architecture = process.arch): Buffer | null {
  const abis = ABIS[arch];
  if (!abis) return null;
  const blockSize = (abi: Abi) => 3 + (abi.mask === undefined ? 0 : 1) + abi.calls.length;
  const allowAt = 1 + abis.reduce((sum, abi) => sum + blockSize(abi), 0);
  const denyAt = allowAt + 1;
  const noSysAt = allowAt + 2;
  const program: Instruction[] = [[BPF_LD_W_ABS, 0, 0, ARCH]];
  const jump = (to: number) => to - program.length - 1;
  for (const abi of abis) {
    const nextAbi = program.length + blockSize(abi);
    program.push([BPF_JEQ_K, 0, jump(nextAbi), abi.audit]);
    program.push([BPF_LD_W_ABS, 0, 0, NR]);
    if (abi.mask !== undefined) program.push([BPF_ALU_AND_K, 0, 0, abi.mask]);
    for (const call of abi.calls) program.push([BPF_JEQ_K, jump(denyAt), 0, call]);
    // After an ABI's last check, a number that matched none goes straight to allow.
    program.push([BPF_JEQ_K, jump(noSysAt), jump(allowAt), abi.ioUringSetup]);
  }
  program.push([BPF_RET_K, 0, 0, RET_ALLOW], [BPF_RET_K, 0, 0, RET_ERRNO | EXDEV], [BPF_RET_K, 0, 0, RET_ERRNO | ENOSYS]);
  // struct sock_filter in the host's byte order (both architectures above are little-endian).
  const out = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    out.writeUInt16LE(code, index * 8);
    out.writeUInt8(jt, index * 8 + 2);
    out.writeUInt8(jf, index * 8 + 3);
    out.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return out;
}
