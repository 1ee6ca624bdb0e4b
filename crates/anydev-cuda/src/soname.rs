//! The soname of an ELF shared object, read from the file: what the
//! dynamic loader matches a library opened by name against. The loader
//! uses it to tell a user why a library named by path would not be the
//! one cudarc opens. Every read is bounds-checked; a file that is not a
//! well-formed ELF object has no soname.

use std::path::Path;

/// The `DT_SONAME` of the ELF shared object at `path` (32- or 64-bit,
/// either byte order), or `None` when it is not one or has none.
pub(crate) fn read_soname(path: &Path) -> Option<String> {
    let data = std::fs::read(path).ok()?;
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
    let uint = |at: usize, len: usize| -> Option<u64> {
        let bytes = data.get(at..at.checked_add(len)?)?;
        let mut v = 0u64;
        for i in 0..len {
            let b = if little { bytes[len - 1 - i] } else { bytes[i] };
            v = (v << 8) | u64::from(b);
        }
        Some(v)
    };
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
            assert_eq!(read_soname(libm).as_deref(), Some("libm.so.6"));
        }
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/soname.rs");
        assert_eq!(read_soname(&source), None);
    }
}
