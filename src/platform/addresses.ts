/**
 * Client addresses as the per-address limits count them (with `ipaddr.js`): loopback clients are never counted
 * (behind a local proxy without `TRUST_PROXY` every client is loopback, and one shared budget would lock everyone
 * out), and an IPv6 client is counted by its /64 network (one subscriber usually holds a whole /64, so counting
 * single addresses would give it 2^64 budgets).
 */
import ipaddr from 'ipaddr.js';

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms (`::ffff:127.0.0.1`). */
export function isLoopbackAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'loopback';
}

/** True for a loopback host of a URL: `localhost`, an address of 127.0.0.0/8, or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  return isLoopbackAddress(hostname.replace(/^\[(.*)\]$/, '$1'));
}

/**
 * The key of a client address in a per-address budget: the IPv4 address (also for an IPv4-mapped IPv6 one), or the
 * /64 network of an IPv6 address (`2001:db8:1:2::/64`); an unparseable value as it is.
 */
export function clientBucket(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${ipaddr.IPv6.parse(`${parts.map((p) => p.toString(16)).join(':')}::`).toString()}/64`;
}
