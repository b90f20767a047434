"""What is measured: one module per kind of case (crc, write, read, memory), and the
check that the contenders do the same work (sanity)."""
