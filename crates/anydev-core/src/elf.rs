//! What the ELF header of a shared library says, read from the file with
//! every read bounds-checked (a file that is not a well-formed ELF object
//! says nothing): the processor it was built for, which the plugin loader
//! names when the system loader refuses a library for another one, and
//! its soname, what the dynamic loader matches a library opened by name
//! against (the CUDA loader says why a library named by path would not be
//! the one cudarc opens).

use std::io::Read;
use std::path::Path;

/// An ELF object's bytes (all of them, or a prefix), 32- or 64-bit, in
/// either byte order.
struct Elf<'a> {
    data: &'a [u8],
    wide: bool,
    little: bool,
}

impl<'a> Elf<'a> {
    /// `None` for anything that is not ELF.
    fn parse(data: &'a [u8]) -> Option<Elf<'a>> {
        if data.get(..4)? != b"\x7fELF" {
            return None;
        }
        let wide = match data.get(4)? {
            1 => false,
            2 => true,
            _ => return None,
        };
        let little = match data.get(5)? {
            1 => true,
            2 => false,
            _ => return None,
        };
        Some(Elf { data, wide, little })
    }

    /// The unsigned integer of `len` bytes at `at`, in the object's order.
    fn uint(&self, at: usize, len: usize) -> Option<u64> {
        let bytes = self.data.get(at..at.checked_add(len)?)?;
        let mut v = 0u64;
        for i in 0..len {
            let b = if self.little { bytes[len - 1 - i] } else { bytes[i] };
            v = (v << 8) | u64::from(b);
        }
        Some(v)
    }
}

/// The `e_machine` field of the ELF object at `path`: which processor it
/// is for. Only the header is read.
pub fn machine(path: &Path) -> Option<u16> {
    let mut header = [0u8; 20];
    std::fs::File::open(path).ok()?.read_exact(&mut header).ok()?;
    Elf::parse(&header)?.uint(18, 2).map(|m| m as u16)
}

/// The `DT_SONAME` of the ELF shared object at `path`, or `None` when it
/// is not one or has none.
pub fn soname(path: &Path) -> Option<String> {
    let data = std::fs::read(path).ok()?;
    let elf = Elf::parse(&data)?;
    let (wide, uint) = (elf.wide, |at: usize, len: usize| elf.uint(at, len));
    let word = if wide { 8 } else { 4 };
    let as_usize = |v: u64| usize::try_from(v).ok();
    // Section headers: e_shoff, e_shentsize, e_shnum.
    let (shoff, shentsize, shnum) = if wide {
        (uint(0x28, 8)?, uint(0x3A, 2)?, uint(0x3C, 2)?)
    } else {
        (uint(0x20, 4)?, uint(0x2E, 2)?, uint(0x30, 2)?)
    };
    let (shoff, shentsize) = (as_usize(shoff)?, as_usize(shentsize)?);
    // sh_type at 4; sh_offset, sh_size and sh_link after the flags/addr words.
    let section = |i: usize| -> Option<(u64, usize, usize, usize)> {
        let at = shoff.checked_add(i.checked_mul(shentsize)?)?;
        let kind = uint(at + 4, 4)?;
        let (offset, size, link) = if wide {
            (uint(at + 0x18, 8)?, uint(at + 0x20, 8)?, uint(at + 0x28, 4)?)
        } else {
            (uint(at + 0x10, 4)?, uint(at + 0x14, 4)?, uint(at + 0x18, 4)?)
        };
        Some((kind, as_usize(offset)?, as_usize(size)?, as_usize(link)?))
    };
    const SHT_DYNAMIC: u64 = 6;
    const DT_NULL: u64 = 0;
    const DT_SONAME: u64 = 14;
    for i in 0..as_usize(shnum)? {
        let (kind, offset, size, link) = section(i)?;
        if kind != SHT_DYNAMIC {
            continue;
        }
        let (_, strtab, strsize, _) = section(link)?;
        let mut at = offset;
        while at + 2 * word <= offset.checked_add(size)? {
            let tag = uint(at, word)?;
            if tag == DT_NULL {
                break;
            }
            if tag == DT_SONAME {
                let start = strtab.checked_add(as_usize(uint(at + word, word)?)?)?;
                let table = data.get(start..strtab.checked_add(strsize)?)?;
                let end = table.iter().position(|&b| b == 0)?;
                return String::from_utf8(table[..end].to_vec()).ok();
            }
            at += 2 * word;
        }
        return None;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_library_has_its_soname_and_a_source_file_none() {
        let libm = Path::new("/lib/x86_64-linux-gnu/libm.so.6");
        if libm.exists() {
            assert_eq!(soname(libm).as_deref(), Some("libm.so.6"));
            // The path is Debian's for x86-64, e_machine 62.
            assert_eq!(machine(libm), Some(62));
        }
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/elf.rs");
        assert_eq!(soname(&source), None);
        assert_eq!(machine(&source), None);
    }
}
