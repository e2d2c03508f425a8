# Counts the frames on an interface that contain a marker, for a number of seconds (host side, as
# root). Bound to the bridge device it sees what the bridge passed up to the host: a forged frame
# dropped at the bridge's port never shows up.
#   capture-frames.py <ifname> <marker> <seconds>   prints "ready", then the count
import socket, sys, time

ifname, marker, seconds = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
s.bind((ifname, 0))
s.settimeout(0.1)
print("ready", flush=True)
count, end = 0, time.time() + seconds
while time.time() < end:
    try:
        frame = s.recv(65535)
    except socket.timeout:
        continue
    if marker in frame:
        count += 1
print(count, flush=True)
