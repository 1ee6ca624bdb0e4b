//! Nothing to use: this crate exists for the cargo features in its
//! manifest, which keep every build of the project on one feature set per
//! shared dependency (see Cargo.toml).
