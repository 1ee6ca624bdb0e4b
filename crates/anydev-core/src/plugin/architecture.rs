//! Which processor a plugin library was built for, read from its ELF
//! header. The system loader refuses a library for another processor with
//! a message that names no architecture (glibc says "cannot open shared
//! object file: No such file or directory" for a file that exists); this
//! lets the load failure say what is wrong.

use std::path::Path;

/// `e_machine` codes of the ELF specification, with their names.
const MACHINES: &[(u16, &str, &str)] = &[
    // (code, Rust's `target_arch`, name for people)
    (3, "x86", "x86 (32-bit)"),
    (20, "powerpc", "PowerPC (32-bit)"),
    (21, "powerpc64", "PowerPC 64"),
    (22, "s390x", "IBM Z (s390x)"),
    (40, "arm", "ARM (32-bit)"),
    (62, "x86_64", "x86-64"),
    (183, "aarch64", "AArch64 (arm64)"),
    (243, "riscv64", "RISC-V"),
    (258, "loongarch64", "LoongArch"),
];

/// "built for AArch64 (arm64), but this process runs on x86-64" when the
/// library at `path` is an ELF object for another processor than this
/// process's; `None` when it is for this one or cannot be told.
pub fn mismatch(path: &Path) -> Option<String> {
    let machine = crate::elf::machine(path)?;
    let (host, host_name) = MACHINES
        .iter()
        .find(|(_, arch, _)| *arch == std::env::consts::ARCH)
        .map(|&(code, _, name)| (code, name))?;
    if machine == host {
        return None;
    }
    let built_for = MACHINES
        .iter()
        .find(|(code, ..)| *code == machine)
        .map_or_else(|| format!("ELF machine {machine}"), |(.., name)| (*name).to_owned());
    Some(format!("built for {built_for}, but this process runs on {host_name}"))
}
