//! One CUDA device: its primary context, its default stream, its memory
//! pool and accounting, what it can reach, and its compiled kernels.

use crate::codegen::{self, ModuleKey};
use crate::compile::{self, Target};
use crate::driver::{self, attribute, bind, check, CUcontext, CUdevice, CUfunction, CUmodule, CUstream, Raw, NAME};
use anydev_core::backend::DeviceProperties;
use anydev_core::capability::{keys, CapValue, Capabilities};
use anydev_core::memory::{MemoryCounter, MemoryKind};
use anydev_core::{Device, Error, Result};
use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// What every allocation and stream of a device shares, kept alive by
/// them even if the backend goes first.
pub struct Core {
    pub index: usize,
    pub ctx: Raw<CUcontext>,
    /// The device's default stream: a real stream created for the device
    /// (non-blocking, never the legacy NULL stream). Pool allocations are
    /// made and freed in its order.
    pub stream: Raw<CUstream>,
    pub counter: MemoryCounter,
}

impl Drop for Core {
    fn drop(&mut self) {
        if bind(self.ctx.0).is_ok() {
            // SAFETY: the stream was created by this device and is destroyed once.
            unsafe { sys::cuStreamDestroy_v2(self.stream.0) };
        }
    }
}

/// How kernels are made on this device: NVRTC's target, or why not.
pub type Kernels = std::result::Result<KernelTarget, String>;

#[derive(Clone, Copy, Debug)]
pub struct KernelTarget {
    pub target: Target,
    pub nvrtc: (i32, i32),
}

/// One module's place in a device's cache: empty until it is loaded; its
/// lock is held while it is compiled and loaded.
type ModuleSlot = Arc<Mutex<Option<Arc<LoadedModule>>>>;

/// A loaded module and the functions looked up in it so far.
pub struct LoadedModule {
    module: Raw<CUmodule>,
    functions: RwLock<HashMap<String, Raw<CUfunction>>>,
}

pub struct CudaDevice {
    pub id: Device,
    pub cu: CUdevice,
    pub core: Arc<Core>,
    pub name: String,
    pub total_memory: usize,
    /// Compute capability as major * 10 + minor.
    pub arch: u32,
    pub sm_count: u32,
    pub driver_version: i32,
    pub pageable_memory_access: bool,
    pub uses_host_page_tables: bool,
    pub managed_memory: bool,
    pub concurrent_managed_access: bool,
    pub host_native_atomics: bool,
    pub memory_pools: bool,
    /// Indices of the devices this one has peer access to.
    pub peers: Vec<usize>,
    pub kernels: Kernels,
    /// Each module's slot, filled by the first thread that needs it. The
    /// map's lock is held only to find a slot, so threads compiling
    /// different modules (seconds each) do not wait for each other.
    modules: Mutex<HashMap<ModuleId, ModuleSlot>>,
    /// The cuBLAS handle, made on first use (or why it could not be).
    pub blas: Mutex<Option<std::result::Result<Raw<cudarc::cublas::sys::cublasHandle_t>, String>>>,
    /// Page-locked buffers for small host transfers.
    pub staging: Mutex<Vec<crate::memory::Staging>>,
}

impl CudaDevice {
    /// Opens device `index` (the driver is initialised).
    pub fn open(id: Device, index: usize, driver_version: i32, kernels: &dyn Fn(u32) -> Kernels) -> Result<CudaDevice> {
        let mut cu: CUdevice = 0;
        // SAFETY: valid out-pointer; the index is below the device count.
        check(unsafe { sys::cuDeviceGet(&mut cu, index as i32) }, "cuDeviceGet")?;
        let mut name_buf = [0 as std::ffi::c_char; 256];
        // SAFETY: the buffer holds 256 bytes.
        check(
            unsafe { sys::cuDeviceGetName(name_buf.as_mut_ptr(), 256, cu) },
            "cuDeviceGetName",
        )?;
        // SAFETY: the driver NUL-terminates within the buffer.
        let name = unsafe { std::ffi::CStr::from_ptr(name_buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut total = 0usize;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::cuDeviceTotalMem_v2(&mut total, cu) }, "cuDeviceTotalMem")?;
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the primary context is retained for the
        // life of the process (shared with any other CUDA user in it).
        check(
            unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, cu) },
            "cuDevicePrimaryCtxRetain",
        )?;
        bind(ctx)?;
        let mut stream: CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the context is current.
        check(
            unsafe { sys::cuStreamCreate(&mut stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) },
            "cuStreamCreate",
        )?;
        let memory_pools = attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
        if memory_pools {
            let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            if unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, cu) } == sys::CUresult::CUDA_SUCCESS {
                // Keep freed memory in the pool instead of returning it to the
                // driver at every synchronisation: small ops then never pay
                // for a real allocation.
                let mut threshold = u64::MAX;
                // SAFETY: the attribute takes a pointer to a u64.
                unsafe {
                    sys::cuMemPoolSetAttribute(
                        pool,
                        sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        &mut threshold as *mut u64 as *mut std::ffi::c_void,
                    )
                };
            }
        }
        let major = attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).max(0) as u32;
        let minor = attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).max(0) as u32;
        let arch = major * 10 + minor;
        Ok(CudaDevice {
            id,
            cu,
            core: Arc::new(Core {
                index,
                ctx: Raw(ctx),
                stream: Raw(stream),
                counter: MemoryCounter::new(None),
            }),
            name,
            total_memory: total,
            arch,
            sm_count: attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).max(1) as u32,
            driver_version,
            pageable_memory_access: attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0,
            uses_host_page_tables: attribute(
                cu,
                Attr::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
            ) != 0,
            managed_memory: attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 0,
            concurrent_managed_access: attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0,
            host_native_atomics: attribute(cu, Attr::CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED) != 0,
            memory_pools,
            peers: Vec::new(),
            kernels: kernels(arch),
            modules: Mutex::new(HashMap::new()),
            blas: Mutex::new(None),
            staging: Mutex::new(Vec::new()),
        })
    }

    pub fn ctx(&self) -> CUcontext {
        self.core.ctx.0
    }

    pub fn stream(&self) -> CUstream {
        self.core.stream.0
    }

    pub fn bind(&self) -> Result<()> {
        bind(self.ctx())
    }

    pub fn memory_kinds(&self) -> Vec<MemoryKind> {
        let mut kinds = vec![MemoryKind::Device, MemoryKind::HostPinned];
        if self.managed_memory {
            kinds.push(MemoryKind::Managed);
        }
        if self.pageable_memory_access {
            kinds.push(MemoryKind::System);
        }
        kinds
    }

    pub fn properties(&self) -> DeviceProperties {
        let v = self.driver_version;
        DeviceProperties {
            name: self.name.clone(),
            vendor: "NVIDIA".into(),
            memory_bytes: self.total_memory as u64,
            driver: format!(
                "CUDA driver {}.{}, compute capability {}.{}, {} SMs",
                v / 1000,
                (v % 1000) / 10,
                self.arch / 10,
                self.arch % 10,
                self.sm_count
            ),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    pub fn capabilities(&self, kind: anydev_core::DeviceKind) -> Capabilities {
        let mut caps = Capabilities::new();
        caps.set_dtypes(&anydev_core::DType::ALL);
        caps.set(keys::MAX_ALLOCATION_BYTES, CapValue::I64(self.total_memory as i64));
        caps.set(keys::COMPUTE_UNITS, CapValue::I64(self.sm_count as i64));
        caps.set(
            keys::PAGEABLE_MEMORY_ACCESS,
            CapValue::Bool(self.pageable_memory_access),
        );
        caps.set(keys::MANAGED_MEMORY, CapValue::Bool(self.managed_memory));
        caps.set(
            keys::CONCURRENT_MANAGED_ACCESS,
            CapValue::Bool(self.concurrent_managed_access),
        );
        caps.set(keys::HOST_ACCESSIBLE_MEMORY, CapValue::Bool(false));
        caps.set(
            keys::PEER_DEVICES,
            CapValue::StrList(self.peers.iter().map(|&p| Device::new(kind, p).to_string()).collect()),
        );
        caps.set(keys::ASYNC_EXECUTION, CapValue::Bool(true));
        caps.set(keys::SOFTWARE, CapValue::Bool(false));
        caps.set(keys::EVENT_TIMING, CapValue::Bool(true));
        // Frees are ordered in the default stream, which every stream of the
        // device joins (`frees_in_stream_order`); only a peer's use of the
        // memory still gets an event.
        caps.set(keys::STREAM_ORDERED_FREE, CapValue::Bool(true));
        // The driver prefetches and takes advice only where the device
        // accesses managed memory concurrently with the host.
        caps.set(keys::MANAGED_PREFETCH, CapValue::Bool(self.concurrent_managed_access));
        caps.set(
            "cuda.compute_capability",
            CapValue::Str(format!("{}.{}", self.arch / 10, self.arch % 10)),
        );
        caps.set("cuda.sm_count", CapValue::I64(self.sm_count as i64));
        caps.set("cuda.driver_version", CapValue::I64(self.driver_version as i64));
        caps.set("cuda.host_native_atomics", CapValue::Bool(self.host_native_atomics));
        caps.set(
            "cuda.pageable_memory_access_uses_host_page_tables",
            CapValue::Bool(self.uses_host_page_tables),
        );
        caps.set("cuda.memory_pools", CapValue::Bool(self.memory_pools));
        caps.set(
            "cuda.kernels",
            CapValue::Str(match &self.kernels {
                Ok(k) => format!(
                    "NVRTC {}.{}, {}",
                    k.nvrtc.0,
                    k.nvrtc.1,
                    if k.target.cubin {
                        format!("sm_{} binaries", k.target.arch)
                    } else {
                        format!("compute_{} PTX (JIT-compiled by the driver)", k.target.arch)
                    }
                ),
                Err(reason) => format!("unavailable: {reason}"),
            }),
        );
        caps.set(
            "cuda.collectives",
            CapValue::Str(match crate::nccl::describe_availability() {
                Ok(nccl) => nccl,
                Err(reason) => format!("unavailable (collectives go through MPI with host staging): {reason}"),
            }),
        );
        caps.set(
            "cuda.cublas",
            CapValue::Str(match crate::loader::available(crate::loader::Lib::Cublas) {
                Ok(()) => "available".into(),
                Err(reason) => format!("unavailable (matmul uses the built-in kernel): {reason}"),
            }),
        );
        caps
    }

    /// The function `kernel` of generated module `key`, compiling and
    /// loading the module on first use. The caller has bound this device's
    /// context.
    pub fn function(&self, key: ModuleKey, kernel: &str) -> Result<CUfunction> {
        self.function_in(ModuleId::Generated(key), || codegen::source(key), kernel)
    }

    /// The function `kernel` of an extension op's CUDA `source`, cached
    /// under `key` like the generated modules (in memory and on disk).
    pub fn extension_function(&self, key: &str, source: &str, kernel: &str) -> Result<CUfunction> {
        self.function_in(ModuleId::Extension(key.to_owned()), || source.to_owned(), kernel)
    }

    fn function_in(&self, id: ModuleId, source: impl FnOnce() -> String, kernel: &str) -> Result<CUfunction> {
        let module = self.module(&id, source)?;
        if let Some(f) = module.functions.read().ok().and_then(|m| m.get(kernel).copied()) {
            return Ok(f.0);
        }
        let cname = std::ffi::CString::new(kernel).map_err(|_| Error::backend(NAME, "kernel name with a NUL"))?;
        let mut f: CUfunction = std::ptr::null_mut();
        // SAFETY: live module, valid name and out-pointer.
        check(
            unsafe { sys::cuModuleGetFunction(&mut f, module.module.0, cname.as_ptr()) },
            &format!("looking up kernel {kernel} in module {}", id.name()),
        )?;
        if let Ok(mut m) = module.functions.write() {
            m.insert(kernel.to_owned(), Raw(f));
        }
        Ok(f)
    }

    fn module(&self, id: &ModuleId, source: impl FnOnce() -> String) -> Result<Arc<LoadedModule>> {
        fn poisoned<T>(_: T) -> Error {
            Error::backend(NAME, "the module cache lock is poisoned")
        }
        let slot = Arc::clone(self.modules.lock().map_err(poisoned)?.entry(id.clone()).or_default());
        let mut slot = slot.lock().map_err(poisoned)?;
        if let Some(m) = slot.as_ref() {
            return Ok(Arc::clone(m));
        }
        let k = self
            .kernels
            .as_ref()
            .map_err(|reason| Error::backend(NAME, format!("kernels are unavailable on {}: {reason}", self.id)))?;
        let name = id.name();
        let source = source();
        let load = |image: &compile::Image| -> std::result::Result<CUmodule, sys::CUresult> {
            let mut m: CUmodule = std::ptr::null_mut();
            // SAFETY: the image is a complete CUBIN or NUL-terminated PTX;
            // the device's context is current.
            let r = unsafe { sys::cuModuleLoadData(&mut m, image.bytes.as_ptr() as *const std::ffi::c_void) };
            if r == sys::CUresult::CUDA_SUCCESS {
                Ok(m)
            } else {
                Err(r)
            }
        };
        let image = compile::compile_cached(&name, &source, k.target, k.nvrtc, self.driver_version)
            .map_err(|e| Error::backend(NAME, e))?;
        let module = match load(&image) {
            Ok(m) => m,
            Err(_) => {
                // A cached image the driver refuses: compile afresh once.
                compile::evict(&name, &source, k.target, k.nvrtc, self.driver_version);
                let fresh = compile::compile(&name, &source, k.target).map_err(|e| Error::backend(NAME, e))?;
                let m = load(&fresh).map_err(|r| {
                    Error::backend(
                        NAME,
                        format!("loading module {name} on {}: {}", self.id, driver::describe(r)),
                    )
                })?;
                compile::write_cached(
                    &compile::cache_dir()
                        .map(|d| {
                            compile::entry_path(
                                &d,
                                &name,
                                &compile::cache_key(&source, k.target, k.nvrtc, self.driver_version),
                                k.target,
                            )
                        })
                        .unwrap_or_default(),
                    &fresh,
                );
                m
            }
        };
        let loaded = Arc::new(LoadedModule {
            module: Raw(module),
            functions: RwLock::new(HashMap::new()),
        });
        *slot = Some(Arc::clone(&loaded));
        Ok(loaded)
    }
}

/// A module in a device's cache: generated by anydev, or an extension op's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ModuleId {
    Generated(ModuleKey),
    Extension(String),
}

impl ModuleId {
    /// The module's name, also its file name in the on-disk cache.
    fn name(&self) -> String {
        match self {
            ModuleId::Generated(key) => key.name(),
            ModuleId::Extension(key) => {
                let safe: String = key
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                format!("ext_{safe}")
            }
        }
    }
}
