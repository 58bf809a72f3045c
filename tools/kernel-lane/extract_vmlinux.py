"""Cuts the uncompressed kernel (an ELF with a PVH note) out of an xz-compressed bzImage,
so QEMU can boot it directly: under TCG that saves the ~3.5 s the guest would spend
decompressing itself. Usage: extract_vmlinux.py BZIMAGE OUTPUT"""
import lzma
import sys

XZ_MAGIC = b'\xfd7zXZ\x00'
ELF_MAGIC = b'\x7fELF'


def main() -> None:
    image = open(sys.argv[1], 'rb').read()
    start = image.find(XZ_MAGIC)
    while start >= 0:
        decompressor = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        try:
            kernel = decompressor.decompress(image[start:])
        except lzma.LZMAError:
            kernel = b''
        if kernel.startswith(ELF_MAGIC):
            with open(sys.argv[2], 'wb') as output:
                output.write(kernel)
            return
        start = image.find(XZ_MAGIC, start + 1)
    sys.exit(f'{sys.argv[1]}: no xz-compressed ELF kernel inside (not an xz bzImage?)')


if __name__ == '__main__':
    main()
