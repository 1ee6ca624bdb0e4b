//! `anydev-dist`: checks, benchmarks and drills for collectives on arrays.
//! Run it under an MPI launcher, e.g. `mpirun -n 4 anydev-dist check`.

use anydev::{Array, DType, Device};
use anydev_dist::{Communicator, DistError, Engine, ReduceOp};
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: anydev-dist <command>   (run under mpirun, srun, ...)

commands:
  info              one line per rank: its device, engine, MPI library, timeout
  check             every collective on every dtype this rank's device holds,
                    checked against a host computation; ends with `N passed, N failed`
  bench [MIN MAX]   all_reduce (sum, f32) bus bandwidth from MIN to MAX bytes
                    (default 1024 to 268435456), like nccl-tests
  drill SCENARIO    make rank 1 misbehave and check that the others fail fast:
                    stall (rank 1 never arrives), exit (rank 1 exits at once),
                    error (rank 1 passes a bad root),
                    mismatch (rank 1 passes another shape),
                    engine (rank 1 routes the device's arrays through mpi),
                    device-stall (rank 1's device is busy past the timeout
                    when a device collective comes; needs the simulator's
                    ANYDEV_SIM_OP_DELAY_US)

environment: ANYDEV_DIST_KIND, ANYDEV_DIST_BACKEND, ANYDEV_DIST_TIMEOUT (docs/distributed.md)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first().map(String::as_str) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if matches!(command, "-h" | "--help" | "help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if !matches!(command, "info" | "check" | "bench" | "drill") {
        eprintln!("anydev-dist: unknown command {command:?}\n\n{USAGE}");
        return ExitCode::from(2);
    }
    let world = match anydev_dist::init() {
        Ok(world) => world,
        Err(e) => {
            eprintln!("anydev-dist: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match command {
        "info" => info(&world),
        "check" => check(&world),
        "bench" => bench(&world, &args[1..]),
        _ => drill(&world, args.get(1).map(String::as_str).unwrap_or("")),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("anydev-dist: rank {}: {e}", world.rank());
            ExitCode::FAILURE
        }
    }
}

fn info(world: &Communicator) -> Result<ExitCode, DistError> {
    // One rank at a time, so the lines come out in rank order.
    for r in 0..world.size() {
        if r == world.rank() {
            println!("{}", world.describe());
            if r == 0 {
                println!("engines: {}", world.engines());
            }
        }
        world.barrier()?;
    }
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------- check

/// The value rank `rank` holds at flat index `i` in the check's arrays;
/// small whole numbers, so every dtype holds them and sums are exact.
fn value(rank: usize, i: usize) -> f64 {
    ((rank * 7 + i * 3) % 5) as f64
}

/// Values for `prod`: 1 or 2, and 1 beyond rank 5, so products fit `i8`.
fn prod_value(rank: usize, i: usize) -> f64 {
    if rank < 6 {
        1.0 + ((rank + i) % 2) as f64
    } else {
        1.0
    }
}

fn host_bool(v: f64) -> f64 {
    if v != 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The array of `rank`'s values in `dtype` on `device`; uploaded as f32,
/// which every device holds, and converted on the device.
fn make(values: &[f64], shape: &[usize], dtype: DType, device: Device) -> anydev::Result<Array> {
    let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
    Array::from_slice(&v, shape, device)?.astype(dtype)
}

fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 2e-3,
        DType::BF16 => 1e-2,
        DType::F32 => 1e-6,
        DType::F64 => 1e-12,
        _ => 0.0,
    }
}

/// Compares `got` with the host's `want`: shape, dtype, device and values.
fn expect(got: &Array, want: &[f64], shape: &[usize], dtype: DType, device: Device) -> Result<(), String> {
    if got.shape() != shape || got.dtype() != dtype || got.device() != device {
        return Err(format!(
            "got shape {:?} {} on {}, expected {:?} {} on {}",
            got.shape(),
            got.dtype(),
            got.device(),
            shape,
            dtype,
            device
        ));
    }
    let values = got.to_f64_vec().map_err(|e| e.to_string())?;
    let tol = tolerance(dtype);
    for (i, (g, w)) in values.iter().zip(want).enumerate() {
        let close = match w.is_nan() {
            true => g.is_nan(),
            false => g == w || (g - w).abs() <= tol * w.abs().max(1.0),
        };
        if !close {
            return Err(format!("element {i}: got {g}, expected {w}"));
        }
    }
    Ok(())
}

struct Checks<'a> {
    world: &'a Communicator,
    names: Vec<String>,
    passed: Vec<u8>,
}

impl Checks<'_> {
    fn case(&mut self, name: String, f: impl FnOnce() -> Result<(), String>) {
        let outcome = f();
        if let Err(why) = &outcome {
            println!("rank {}: FAIL {name}: {why}", self.world.rank());
        }
        self.names.push(name);
        self.passed.push(u8::from(outcome.is_ok()));
    }
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Sends `x` to the next rank and returns what the previous one sent
/// (even ranks send first, odd ones receive first).
fn around_the_ring(world: &Communicator, x: &Array) -> Result<Array, String> {
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    if rank % 2 == 0 {
        world.send(x, next, 7).map_err(err)?;
        world.recv(prev, 7).map_err(err)
    } else {
        let got = world.recv(prev, 7).map_err(err)?;
        world.send(x, next, 7).map_err(err)?;
        Ok(got)
    }
}

fn check(world: &Communicator) -> Result<ExitCode, DistError> {
    let device = world.device();
    let caps = anydev::runtime().capabilities(device)?;
    // Complex values are moved but not reduced by any engine
    // (`check_reduce` refuses them, and its unit test says so).
    let dtypes: Vec<DType> = DType::ALL
        .into_iter()
        .filter(|d| caps.supports_dtype(*d) && !d.is_complex())
        .collect();
    let (rank, size) = (world.rank(), world.size());
    let mut c = Checks {
        world,
        names: Vec::new(),
        passed: Vec::new(),
    };
    let shape = [3usize, 4];
    let n = 12;

    for &dtype in &dtypes {
        for op in ReduceOp::ALL {
            let name = format!("all_reduce {} {dtype}", op.name());
            let refused = op == ReduceOp::Mean && !dtype.is_float();
            let value_of = |r: usize, i: usize| {
                let v = if op == ReduceOp::Prod {
                    prod_value(r, i)
                } else {
                    value(r, i)
                };
                if dtype == DType::Bool {
                    host_bool(v)
                } else {
                    v
                }
            };
            c.case(name, || {
                let mine: Vec<f64> = (0..n).map(|i| value_of(rank, i)).collect();
                let x = make(&mine, &shape, dtype, device).map_err(err)?;
                let got = world.all_reduce(&x, op);
                if refused {
                    return match got {
                        Err(DistError::Unsupported { .. }) => Ok(()),
                        other => Err(format!("mean of {dtype} should be refused, got {other:?}")),
                    };
                }
                let got = got.map_err(err)?;
                let want: Vec<f64> = (0..n)
                    .map(|i| {
                        let all = (0..size).map(|r| value_of(r, i));
                        match (op, dtype) {
                            (ReduceOp::Sum | ReduceOp::Max, DType::Bool) => host_bool(all.sum()),
                            (ReduceOp::Prod | ReduceOp::Min, DType::Bool) => all.product(),
                            (ReduceOp::Sum, _) => all.sum(),
                            (ReduceOp::Prod, _) => all.product(),
                            (ReduceOp::Min, _) => all.fold(f64::INFINITY, f64::min),
                            (ReduceOp::Max, _) => all.fold(f64::NEG_INFINITY, f64::max),
                            (ReduceOp::Mean, _) => all.sum::<f64>() / size as f64,
                        }
                    })
                    .collect();
                expect(&got, &want, &shape, dtype, device)
            });
        }

        if dtype == DType::F16 {
            // Every rank's largest f16: the sum overflows f16, the mean must not.
            c.case("all_reduce mean f16 of 65504 on every rank".to_owned(), || {
                let top = vec![65504.0; n];
                let x = make(&top, &shape, dtype, device).map_err(err)?;
                let got = world.all_reduce(&x, ReduceOp::Mean).map_err(err)?;
                expect(&got, &top, &shape, dtype, device)
            });
        }

        let host = |r: usize, i: usize| {
            let v = value(r, i);
            if dtype == DType::Bool {
                host_bool(v)
            } else {
                v
            }
        };
        let root = size - 1;
        c.case(format!("broadcast from rank {root} {dtype}"), || {
            let mine: Vec<f64> = (0..n).map(|i| host(rank, i)).collect();
            let x = make(&mine, &shape, dtype, device).map_err(err)?;
            let got = world.broadcast(&x, root).map_err(err)?;
            let want: Vec<f64> = (0..n).map(|i| host(root, i)).collect();
            expect(&got, &want, &shape, dtype, device)
        });

        c.case(format!("all_gather {dtype}"), || {
            let mine: Vec<f64> = (0..n).map(|i| host(rank, i)).collect();
            let x = make(&mine, &shape, dtype, device).map_err(err)?;
            let got = world.all_gather(&x).map_err(err)?;
            let want: Vec<f64> = (0..size).flat_map(|r| (0..n).map(move |i| host(r, i))).collect();
            expect(&got, &want, &[size, 3, 4], dtype, device)
        });

        // Blocks of two rows of three per rank along axis 0.
        let rows = 2 * size;
        let m = rows * 3;
        for op in [ReduceOp::Sum, ReduceOp::Max] {
            c.case(format!("reduce_scatter {} {dtype}", op.name()), || {
                let mine: Vec<f64> = (0..m).map(|i| host(rank, i)).collect();
                let x = make(&mine, &[rows, 3], dtype, device).map_err(err)?;
                let got = world.reduce_scatter(&x, op).map_err(err)?;
                let want: Vec<f64> = (rank * 6..rank * 6 + 6)
                    .map(|i| {
                        let all = (0..size).map(|r| host(r, i));
                        match op {
                            ReduceOp::Sum if dtype == DType::Bool => host_bool(all.sum()),
                            ReduceOp::Sum => all.sum(),
                            _ => all.fold(f64::NEG_INFINITY, f64::max),
                        }
                    })
                    .collect();
                expect(&got, &want, &[2, 3], dtype, device)
            });
        }

        c.case(format!("all_to_all {dtype}"), || {
            let mine: Vec<f64> = (0..m).map(|i| host(rank, i)).collect();
            let x = make(&mine, &[rows, 3], dtype, device).map_err(err)?;
            let got = world.all_to_all(&x).map_err(err)?;
            // Block r of the result is block `rank` of rank r's input.
            let want: Vec<f64> = (0..size)
                .flat_map(|r| (rank * 6..rank * 6 + 6).map(move |i| host(r, i)))
                .collect();
            expect(&got, &want, &[rows, 3], dtype, device)
        });

        if size > 1 {
            c.case(format!("send/recv around the ring {dtype}"), || {
                let mine: Vec<f64> = (0..n).map(|i| host(rank, i)).collect();
                let x = make(&mine, &shape, dtype, device).map_err(err)?;
                let got = around_the_ring(world, &x)?;
                let prev = (rank + size - 1) % size;
                let want: Vec<f64> = (0..n).map(|i| host(prev, i)).collect();
                expect(&got, &want, &shape, dtype, device)
            });
        }

        // An empty message of bytes once aborted the job inside MPI.
        c.case(format!("every collective of an empty {dtype} array"), || {
            let empty = [0usize, 3];
            let x = make(&[], &empty, dtype, device).map_err(err)?;
            let reduced = world.all_reduce(&x, ReduceOp::Sum).map_err(err)?;
            expect(&reduced, &[], &empty, dtype, device)?;
            let scattered = world.reduce_scatter(&x, ReduceOp::Max).map_err(err)?;
            expect(&scattered, &[], &empty, dtype, device)?;
            expect(&world.broadcast(&x, size - 1).map_err(err)?, &[], &empty, dtype, device)?;
            expect(&world.all_gather(&x).map_err(err)?, &[], &[size, 0, 3], dtype, device)?;
            expect(&world.all_to_all(&x).map_err(err)?, &[], &empty, dtype, device)?;
            if size > 1 {
                expect(&around_the_ring(world, &x)?, &[], &empty, dtype, device)?;
            }
            Ok(())
        });
    }

    c.case("min and max keep a NaN from any rank".into(), || {
        // NaN from the last rank in element 0 and from rank 0 in element 1.
        let nan_at = |r: usize, i: usize| (i == 0 && r == size - 1) || (i == 1 && r == 0);
        let mine: Vec<f64> = (0..4)
            .map(|i| if nan_at(rank, i) { f64::NAN } else { value(rank, i) })
            .collect();
        let x = make(&mine, &[4], DType::F32, device).map_err(err)?;
        for op in [ReduceOp::Min, ReduceOp::Max] {
            let got = world.all_reduce(&x, op).map_err(err)?;
            let want: Vec<f64> = (0..4)
                .map(|i| {
                    let all = (0..size).map(|r| if nan_at(r, i) { f64::NAN } else { value(r, i) });
                    match op {
                        _ if i < 2 => f64::NAN,
                        ReduceOp::Min => all.fold(f64::INFINITY, f64::min),
                        _ => all.fold(f64::NEG_INFINITY, f64::max),
                    }
                })
                .collect();
            expect(&got, &want, &[4], DType::F32, device).map_err(|e| format!("{}: {e}", op.name()))?;
        }
        Ok(())
    });

    // Every rank sees the same devices, so every rank runs this or none.
    let kin: Vec<Device> = anydev::runtime()
        .devices()
        .into_iter()
        .filter(|d| d.kind() == device.kind())
        .collect();
    if kin.len() > 1 {
        let other = kin[(device.index() + 1) % kin.len()];
        c.case(
            format!("collectives of arrays on another {} device", device.kind()),
            || {
                let mine: Vec<f64> = (0..n).map(|i| value(rank, i)).collect();
                let x = make(&mine, &shape, DType::F32, other).map_err(err)?;
                let sum: Vec<f64> = (0..n).map(|i| (0..size).map(|r| value(r, i)).sum()).collect();
                expect(
                    &world.all_reduce(&x, ReduceOp::Sum).map_err(err)?,
                    &sum,
                    &shape,
                    DType::F32,
                    other,
                )?;
                let all: Vec<f64> = (0..size).flat_map(|r| (0..n).map(move |i| value(r, i))).collect();
                expect(
                    &world.all_gather(&x).map_err(err)?,
                    &all,
                    &[size, 3, 4],
                    DType::F32,
                    other,
                )?;
                let first: Vec<f64> = (0..n).map(|i| value(0, i)).collect();
                expect(&world.broadcast(&x, 0).map_err(err)?, &first, &shape, DType::F32, other)
            },
        );
    }

    c.case("all_reduce of a non-contiguous view".into(), || {
        let mine: Vec<f64> = (0..n).map(|i| value(rank, i)).collect();
        let x = make(&mine, &[4, 3], DType::F32, device)
            .and_then(|x| x.matrix_transpose())
            .map_err(err)?;
        let got = world.all_reduce(&x, ReduceOp::Sum).map_err(err)?;
        // x[i][j] = value(rank, j * 3 + i)
        let want: Vec<f64> = (0..3)
            .flat_map(|i| (0..4).map(move |j| (i, j)))
            .map(|(i, j)| (0..size).map(|r| value(r, j * 3 + i)).sum())
            .collect();
        expect(&got, &want, &[3, 4], DType::F32, device)
    });

    c.case("barrier".into(), || world.barrier().map_err(err));

    c.case("split by parity, then all_reduce in each half".into(), || {
        let half = world.split((rank % 2) as u32, rank as i32).map_err(err)?;
        let members: Vec<usize> = (0..size).filter(|r| r % 2 == rank % 2).collect();
        if half.size() != members.len() || half.rank() != rank / 2 {
            return Err(format!(
                "rank {} of {} in the half, expected {} of {}",
                half.rank(),
                half.size(),
                rank / 2,
                members.len()
            ));
        }
        let x = make(&[rank as f64], &[1], DType::I32, device).map_err(err)?;
        let got = half.all_reduce(&x, ReduceOp::Sum).map_err(err)?;
        let want = members.iter().sum::<usize>() as f64;
        expect(&got, &[want], &[1], DType::I32, device)
    });

    if size > 1 {
        let odd = size - 1;
        c.case(format!("a differing shape names rank {odd}"), || {
            let len = if rank == odd { 3 } else { 2 };
            let x = make(&vec![1.0; len], &[len], DType::F32, device).map_err(err)?;
            match world.all_reduce(&x, ReduceOp::Sum) {
                Err(DistError::Mismatch {
                    rank: r,
                    field: "shape",
                    ..
                }) if r == odd => Ok(()),
                other => Err(format!("expected a shape mismatch naming rank {odd}, got {other:?}")),
            }
        });
        c.case(format!("a different collective names rank {odd}"), || {
            let x = make(&[1.0], &[1], DType::F32, device).map_err(err)?;
            let outcome = if rank == odd {
                world.barrier().map(|_| ())
            } else {
                world.all_reduce(&x, ReduceOp::Sum).map(|_| ())
            };
            match outcome {
                Err(DistError::Mismatch {
                    rank: r, field: "call", ..
                }) if r == odd => Ok(()),
                other => Err(format!("expected a call mismatch naming rank {odd}, got {other:?}")),
            }
        });
        c.case(format!("a bad root on rank {odd} fails every rank"), || {
            let x = make(&[1.0], &[1], DType::F32, device).map_err(err)?;
            let root = if rank == odd { size } else { 0 };
            match world.broadcast(&x, root) {
                Err(DistError::InvalidInput { .. }) if rank == odd => Ok(()),
                Err(DistError::PeerFailed { rank: r, .. }) if r == odd && rank != odd => Ok(()),
                other => Err(format!(
                    "expected the bad root of rank {odd} to fail every rank, got {other:?}"
                )),
            }
        });
        c.case("the communicator works after those errors".into(), || {
            let x = make(&[1.0], &[1], DType::F32, device).map_err(err)?;
            let got = world.all_reduce(&x, ReduceOp::Sum).map_err(err)?;
            expect(&got, &[size as f64], &[1], DType::F32, device)
        });
    }

    c.case(
        "a second init is refused while the first world lives".into(),
        || match anydev_dist::init() {
            Err(DistError::Init(why)) if why.contains("split") => Ok(()),
            Err(other) => Err(format!("expected an init error that says to split, got {other}")),
            Ok(_) => Err("a second init succeeded".into()),
        },
    );

    c.case("describe names the device and the engine".into(), || {
        let d = world.describe();
        let route = world.route(device).map_err(err)?;
        let want = format!("{device} via {route}");
        if d.contains(&want) {
            Ok(())
        } else {
            Err(format!("{d:?} does not contain {want:?}"))
        }
    });

    // A case passes when it passed on every rank.
    let local = Array::from_slice(&c.passed, &[c.passed.len()], Device::cpu())?;
    let all = world.all_reduce(&local, ReduceOp::Min)?.to_vec::<u8>()?;
    let passed = all.iter().filter(|&&p| p == 1).count();
    let failed = all.len() - passed;
    world.barrier()?;
    if rank == 0 {
        for (name, ok) in c.names.iter().zip(&all) {
            if *ok == 0 {
                println!("FAILED: {name}");
            }
        }
        println!("{}", world.describe());
        println!("{passed} passed, {failed} failed");
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

// ---------------------------------------------------------------- bench

fn parse_bytes(s: &str) -> Result<usize, DistError> {
    let (digits, scale) = match s.trim().to_ascii_uppercase() {
        t if t.ends_with('K') => (t[..t.len() - 1].to_owned(), 1 << 10),
        t if t.ends_with('M') => (t[..t.len() - 1].to_owned(), 1 << 20),
        t if t.ends_with('G') => (t[..t.len() - 1].to_owned(), 1 << 30),
        t => (t, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|n| *n >= 4)
        .ok_or_else(|| DistError::Config(format!("{s:?} is not a size in bytes (K, M, G suffixes; at least 4)")))
}

fn bench(world: &Communicator, args: &[String]) -> Result<ExitCode, DistError> {
    let min = args.first().map(|s| parse_bytes(s)).transpose()?.unwrap_or(1 << 10);
    let max = args.get(1).map(|s| parse_bytes(s)).transpose()?.unwrap_or(256 << 20);
    let device = world.device();
    let size = world.size();
    if world.rank() == 0 {
        println!("# {}", world.describe());
        println!("# all_reduce sum f32, {size} ranks; time per call (slowest rank), array to array");
        println!("# busbw = algbw * 2 * (ranks - 1) / ranks, as nccl-tests reports it");
        println!(
            "{:>12} {:>10} {:>12} {:>10} {:>10}",
            "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)"
        );
    }
    let mut bytes = min;
    while bytes <= max {
        let count = bytes / 4;
        let x = anydev::full(&[count], 1.0, (DType::F32, device))?;
        // Same iteration count on every rank: it depends on the size only.
        let iters = ((64usize << 20) / bytes).clamp(3, 200);
        world.all_reduce(&x, ReduceOp::Sum)?; // warm up
        world.barrier()?;
        let start = Instant::now();
        let mut last = None;
        for _ in 0..iters {
            last = Some(world.all_reduce(&x, ReduceOp::Sum)?);
        }
        if let Some(y) = last {
            // The result must be right, and on the host before the clock stops.
            let first = y.slice(&[anydev::SliceArg::Index(0)])?.to_scalar::<f32>()?;
            if first != size as f32 {
                return Err(DistError::InvalidInput {
                    op: "bench".into(),
                    message: format!("all_reduce gave {first}, expected {size}"),
                });
            }
        }
        let local = start.elapsed().as_secs_f64() / iters as f64;
        let slowest = world
            .all_reduce(&Array::from_slice(&[local], &[1], Device::cpu())?, ReduceOp::Max)?
            .to_scalar::<f64>()?;
        if world.rank() == 0 {
            let algbw = bytes as f64 / slowest / 1e9;
            let busbw = algbw * 2.0 * (size as f64 - 1.0) / size as f64;
            println!(
                "{:>12} {:>10} {:>12.1} {:>10.3} {:>10.3}",
                bytes,
                count,
                slowest * 1e6,
                algbw,
                busbw
            );
        }
        bytes *= 4;
    }
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------- drill

/// Whether an error is the one a drill expects on a rank.
type Expected = fn(&DistError, usize) -> bool;

/// Rank 1 misbehaves; every other rank must fail fast with the expected
/// error. Each rank prints one line `drill SCENARIO rank R: ok|FAILED ...`.
fn drill(world: &Communicator, scenario: &str) -> Result<ExitCode, DistError> {
    let rank = world.rank();
    if world.size() < 2 {
        return Err(DistError::Config("a drill needs at least 2 ranks".into()));
    }
    let timeout = world.timeout();
    let x = anydev::ones(&[8], (DType::F32, world.device()))?;
    world.barrier()?;
    let start = Instant::now();
    let (outcome, expected): (Result<(), DistError>, Expected) = match scenario {
        "stall" => {
            if rank == 1 {
                // Stuck (or busy elsewhere) well past everybody's timeout.
                std::thread::sleep(timeout * 3 + Duration::from_secs(2));
                println!("drill stall rank 1: ok (woke up; the launcher ends the job)");
                return Ok(ExitCode::SUCCESS);
            }
            (world.all_reduce(&x, ReduceOp::Sum).map(|_| ()), |e, _| {
                matches!(e, DistError::Timeout { .. })
            })
        }
        "exit" => {
            if rank == 1 {
                // Gone without a word: no error, no MPI_Finalize.
                println!("drill exit rank 1: leaving now");
                std::process::exit(3);
            }
            (world.all_reduce(&x, ReduceOp::Sum).map(|_| ()), |e, _| {
                matches!(e, DistError::Timeout { .. })
            })
        }
        "error" => {
            let root = if rank == 1 { world.size() + 5 } else { 0 };
            (world.broadcast(&x, root).map(|_| ()), |e, me| match e {
                DistError::InvalidInput { .. } => me == 1,
                DistError::PeerFailed { rank: 1, .. } => me != 1,
                _ => false,
            })
        }
        "mismatch" => {
            let y = if rank == 1 {
                anydev::ones(&[9], (DType::F32, world.device()))?
            } else {
                x.clone()
            };
            (world.all_reduce(&y, ReduceOp::Sum).map(|_| ()), |e, _| {
                matches!(e, DistError::Mismatch { rank: 1, .. })
            })
        }
        "engine" => {
            if rank == 1 {
                world.set_engine(world.device().kind().as_str(), Engine::Mpi)?;
            }
            (world.all_reduce(&x, ReduceOp::Sum).map(|_| ()), |e, _| {
                matches!(
                    e,
                    DistError::Mismatch {
                        rank: 1,
                        field: "engine",
                        ..
                    }
                )
            })
        }
        "device-stall" => {
            // The device's communicator works at first; then rank 1 queues
            // work on its device that outlasts the timeout ahead of the
            // next collective, so the others wait inside the device's
            // collective until their timeout aborts it.
            let kind = world.device().kind();
            if !world.route(world.device())?.engine.is_device_native() {
                return Err(DistError::Config(format!(
                    "the device-stall drill needs {kind} arrays routed through the device's own collectives"
                )));
            }
            let delay = std::env::var("ANYDEV_SIM_OP_DELAY_US")
                .ok()
                .and_then(|us| us.parse::<u64>().ok())
                .filter(|&us| us > 0)
                .map(Duration::from_micros)
                .ok_or_else(|| {
                    DistError::Config(
                        "the device-stall drill needs ANYDEV_SIM_OP_DELAY_US (the simulator's delay per op)".into(),
                    )
                })?;
            world.all_reduce(&x, ReduceOp::Sum)?;
            // Kept until the collective is queued: freeing them could wait.
            let mut busy = Vec::new();
            if rank == 1 {
                let ops = 2 * timeout.as_micros() / delay.as_micros() + 1;
                for _ in 0..ops {
                    busy.push(x.add(&x)?);
                }
            }
            let outcome = world.all_reduce(&x, ReduceOp::Sum).map(|_| ());
            drop(busy);
            (outcome, |e, _| match e {
                DistError::Timeout { .. } => true,
                DistError::Array(e) => e.to_string().contains("aborted"),
                _ => false,
            })
        }
        other => {
            return Err(DistError::Config(format!(
                "unknown drill {other:?}; drills: stall, exit, error, mismatch, engine, device-stall"
            )))
        }
    };
    let elapsed = start.elapsed().as_secs_f64();
    match outcome {
        Err(e) if expected(&e, rank) => {
            println!("drill {scenario} rank {rank}: ok after {elapsed:.2} s: {e}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("drill {scenario} rank {rank}: FAILED after {elapsed:.2} s with another error: {e}");
            Ok(ExitCode::FAILURE)
        }
        Ok(()) => {
            println!("drill {scenario} rank {rank}: FAILED: the call succeeded");
            Ok(ExitCode::FAILURE)
        }
    }
}
