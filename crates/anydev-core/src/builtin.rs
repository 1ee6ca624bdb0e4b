//! The backends compiled into the program, collected at link time.
//!
//! The crate that chooses the backends (the `anydev` facade, through its
//! cargo features) registers each with [`builtin_backend!`]; the runtime
//! reads them with [`builtin_providers`]. So neither the core nor the array
//! layer names a concrete backend, and a program gets exactly the backends
//! it links. The registrations are `#[used]` statics in a linker section,
//! which rustc keeps for every crate the program links, including a crate
//! it reaches only through re-exports.

/// One backend compiled into the program.
pub struct BuiltinBackend {
    /// Position among the built-in backends: providers are listed in
    /// ascending rank, which breaks ties of priority (the later wins) and
    /// orders `anydev info`. The link order itself is unspecified.
    pub rank: u32,
    /// Makes the backend's provider; nothing starts until the runtime
    /// needs the backend.
    pub provider: fn() -> crate::BackendProvider,
}

#[doc(hidden)]
pub use linkme;

/// Every registered built-in backend, in link order.
#[linkme::distributed_slice]
pub static BUILTIN_BACKENDS: [BuiltinBackend];

/// Registers a built-in backend: `builtin_backend!(CPU, 0, anydev_cpu::provider);`
/// defines a static named `CPU` in the registry, ranked 0, whose provider
/// comes from `anydev_cpu::provider`. Registering two backends of one name
/// is caught when the runtime is built (`Runtime::new` reports it).
#[macro_export]
macro_rules! builtin_backend {
    ($name:ident, $rank:expr, $provider:path) => {
        #[$crate::builtin::linkme::distributed_slice($crate::builtin::BUILTIN_BACKENDS)]
        #[linkme(crate = $crate::builtin::linkme)]
        static $name: $crate::builtin::BuiltinBackend = $crate::builtin::BuiltinBackend {
            rank: $rank,
            provider: $provider,
        };
    };
}

/// The providers of the registered built-in backends, in ascending rank
/// (equal ranks by name, so the list never depends on link order).
pub fn builtin_providers() -> Vec<crate::BackendProvider> {
    let mut registered: Vec<(u32, crate::BackendProvider)> =
        BUILTIN_BACKENDS.iter().map(|b| (b.rank, (b.provider)())).collect();
    registered.sort_by(|(rank_a, a), (rank_b, b)| rank_a.cmp(rank_b).then_with(|| a.name.cmp(&b.name)));
    registered.into_iter().map(|(_, provider)| provider).collect()
}
