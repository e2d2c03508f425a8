import { describe, expect, it } from 'vitest';
import { intToIp, ipToInt, parseSubnet } from './subnet.js';

describe('subnet', () => {
  it('gives the host the first address and sandboxes the rest, minus broadcast', () => {
    const s = parseSubnet('10.200.7.9/16');
    expect(s.gateway).toBe('10.200.0.1');
    expect(intToIp(s.first)).toBe('10.200.0.2');
    expect(intToIp(s.last)).toBe('10.200.255.254');
    expect(s.prefix).toBe(16);
  });

  it('round-trips addresses and rejects bad input', () => {
    expect(intToIp(ipToInt('192.168.1.254'))).toBe('192.168.1.254');
    expect(() => parseSubnet('10.0.0.0/33')).toThrow();
    expect(() => ipToInt('10.0.0.256')).toThrow();
  });
});
