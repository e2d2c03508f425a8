import { describe, expect, it } from 'vitest';
import { sandboxSeccomp } from './seccomp.js';

describe('sandbox seccomp profile (issue 19 item 9)', () => {
  const profile = sandboxSeccomp('x64');
  const allowedUnconditionally = new Set(
    profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args).flatMap((r) => r.names),
  );

  it('denies by default with EPERM, for the native ABI only', () => {
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
    expect(profile.defaultErrnoRet).toBe(1);
    expect(profile.architectures).toEqual(['SCMP_ARCH_X86_64']);
    expect(sandboxSeccomp('arm64').architectures).toEqual(['SCMP_ARCH_AARCH64']);
  });

  it('allows none of what Docker denies a container without CAP_SYS_ADMIN, nor io_uring', () => {
    for (const name of [
      'unshare',
      'setns',
      'mount',
      'umount2',
      'fsopen',
      'open_tree',
      'move_mount',
      'keyctl',
      'add_key',
      'request_key',
      'bpf',
      'perf_event_open',
      'io_uring_setup',
      'io_uring_enter',
      'io_uring_register',
      'userfaultfd',
      'init_module',
      'finit_module',
      'kexec_load',
      'reboot',
      'swapon',
      'pivot_root',
      'clone3',
      'clone',
      'socket',
      'personality',
    ]) {
      expect(allowedUnconditionally.has(name), name).toBe(false);
    }
  });

  it('allows clone only without namespace flags, and answers clone3 with ENOSYS', () => {
    const clone = profile.syscalls.find((r) => r.names.includes('clone'));
    expect(clone?.args).toEqual([{ index: 0, value: 0x7e020000, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }]);
    const clone3 = profile.syscalls.find((r) => r.names.includes('clone3'));
    expect(clone3).toMatchObject({ action: 'SCMP_ACT_ERRNO', errnoRet: 38 });
  });

  it('keeps what ordinary programs need', () => {
    for (const name of [
      'read',
      'write',
      'openat',
      'pipe2',
      'execve',
      'wait4',
      'epoll_pwait',
      'futex',
      'mmap',
    ]) {
      expect(allowedUnconditionally.has(name), name).toBe(true);
    }
  });
});
