//! The device-generic cases, one module per family. Each case checks its
//! results against a host reference computed in f64 by plain loops
//! ([`crate::reference`]), never against another device's kernel.

mod abi;
pub mod accuracy;
mod elementwise;
mod errors;
mod limits;
mod linalg;
mod manipulation;
mod math_special;
mod math_trig;
mod ordering;
mod placement;
mod reductions;
mod search;

use crate::case::Case;

/// Every case, families in a fixed order.
pub fn all() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(elementwise::cases());
    cases.extend(reductions::cases());
    cases.extend(linalg::cases());
    cases.extend(manipulation::cases());
    cases.extend(search::cases());
    cases.extend(accuracy::cases());
    cases.extend(math_special::cases());
    cases.extend(math_trig::cases());
    cases.extend(limits::cases());
    cases.extend(placement::cases());
    cases.extend(errors::cases());
    cases.extend(abi::cases());
    cases.extend(ordering::cases());
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
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate case names");
    }
}
