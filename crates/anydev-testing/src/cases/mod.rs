//! The device-generic cases, one module per family. Each case checks its
//! results against a host reference computed in f64 by plain loops
//! ([`crate::reference`]), never against another device's kernel.

mod abi;
mod accelerator;
pub mod accuracy;
mod collective;
mod complex;
mod defaults;
mod elementwise;
mod errors;
pub mod extension;
mod factorize;
mod factorize_stacks;
mod fft;
mod indexing;
mod limits;
mod linalg;
mod linalg_ext;
mod manipulation;
mod math_special;
mod math_trig;
mod ordering;
mod placement;
mod reductions;
mod search;
mod sets;
mod update;

use crate::case::Case;
use std::sync::{Mutex, PoisonError};

/// The cases extension libraries ship for their ops, registered by the
/// program that runs them (`anydev conformance` registers the libraries it
/// links).
static LIBRARIES: Mutex<Vec<LibraryCases>> = Mutex::new(Vec::new());

/// The function through which a library hands over its cases.
pub type LibraryCases = fn() -> Vec<Case>;

/// Adds an extension library's cases to [`all`] (once; registering the
/// same function again changes nothing). Their names must be namespaced
/// like the library's ops (`quant::...`), and each case needs
/// [`crate::Need::ExtensionOp`] for the ops it calls, so a device without
/// them skips it.
pub fn register_library(cases: LibraryCases) {
    let mut libraries = LIBRARIES.lock().unwrap_or_else(PoisonError::into_inner);
    if !libraries.iter().any(|&f| std::ptr::fn_addr_eq(f, cases)) {
        libraries.push(cases);
    }
}

/// Every case, families in a fixed order, then the registered libraries'.
pub fn all() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(elementwise::cases());
    cases.extend(reductions::cases());
    cases.extend(linalg::cases());
    cases.extend(linalg_ext::cases());
    cases.extend(fft::cases());
    cases.extend(factorize::cases());
    cases.extend(factorize_stacks::cases());
    cases.extend(manipulation::cases());
    cases.extend(search::cases());
    cases.extend(sets::cases());
    cases.extend(indexing::cases());
    cases.extend(update::cases());
    cases.extend(extension::cases());
    cases.extend(accuracy::cases());
    cases.extend(math_special::cases());
    cases.extend(math_trig::cases());
    cases.extend(limits::cases());
    cases.extend(placement::cases());
    cases.extend(defaults::cases());
    cases.extend(errors::cases());
    cases.extend(abi::cases());
    cases.extend(ordering::cases());
    cases.extend(complex::cases());
    cases.extend(accelerator::cases());
    cases.extend(collective::cases());
    let libraries = LIBRARIES.lock().unwrap_or_else(PoisonError::into_inner).clone();
    cases.extend(libraries.into_iter().flat_map(|library| library()));
    cases
}

#[cfg(test)]
mod tests {
    #[test]
    fn case_names_are_unique_and_namespaced() {
        let cases = super::all();
        let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert!(names.iter().all(|n| n.contains("::")), "{names:?}");
        names.sort();
        let repeated: Vec<&str> = names.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
        assert!(repeated.is_empty(), "duplicate case names: {repeated:?}");
    }
}
