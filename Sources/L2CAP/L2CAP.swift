// L2CAP: ACL reassembly and fragmentation, fixed channels, LE signaling (issue 4).
