//! A fixed loop of one op on one device (`cpu:0` unless named), for
//! profilers that need a plain process rather than a benchmark harness:
//!
//! ```sh
//! cargo build --release -p anydev-bench --example profile
//! valgrind --tool=callgrind target/release/examples/profile add 10000000 3
//! ```
//!
//! Arguments: op (`add`, `add_row`, `less`, `exp`, `sum`, `sum_rows`,
//! `sum_columns`, `nonzero`, `nonzero_half`, `count_half`, `take`, `sort`,
//! `sort_rows`, `argsort`, `matmul`, `to_cpu`, `from_cpu`), size (`take`
//! gathers a third of it, at random) (elements,
//! or `n` of an `n x n` matmul; `add_row` adds a row of `width` to each of
//! `size / width` rows, `sum_rows` sums each of them, `sort_rows` sorts
//! each, `sum_columns` sums each of the `width` columns), calls, device (a plugin's through
//! `ANYDEV_PLUGINS`), width (default 1000; a GPU backend picks its
//! reduction kernel by it). One untimed call comes first; the loop ends
//! with a synchronisation of the device, so asynchronous devices are timed
//! to completion.

use anydev_bench::Pair;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let op = args.get(1).map_or("add", String::as_str);
    let size: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let calls: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let device: anydev::Device = args
        .get(4)
        .map_or("cpu:0", String::as_str)
        .parse()
        .expect("a device name");
    let width: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let (shape, y_shape) = match op {
        "matmul" => (vec![size, size], vec![size, size]),
        "add_row" | "sum_rows" | "sum_columns" | "sort_rows" => (vec![size / width, width], vec![width]),
        _ => (vec![size], vec![size]),
    };
    let on_host = Pair::new(&shape, 1).anydev;
    let on_device = |x: &anydev::Array| x.to_device(device).expect("the device holds the inputs");
    let (x, y) = (on_device(&on_host), on_device(&Pair::new(&y_shape, 2).anydev));
    // `nonzero_half`'s and `count_half`'s input: true at about half the
    // elements, at random.
    let half = x.less(&y).expect("the inputs compare");
    // `take`'s indices: a third as many as elements, spread at random
    // (made only for `take`, so that other ops run on devices without i64).
    let picks = (op == "take").then(|| {
        let picks: Vec<i64> = anydev_bench::values(size / 3, 3)
            .iter()
            .map(|v| ((v - 0.5) * size as f32) as i64 % size.max(1) as i64)
            .collect();
        on_device(&anydev::Array::from_slice(&picks, &[picks.len()], anydev::Device::cpu()).expect("cpu:0 holds i64"))
    });
    let call = || {
        match op {
            "add" | "add_row" => x.add(&y),
            "less" => x.less(&y),
            "exp" => x.exp(),
            "sum" => x.sum(anydev::ALL, false),
            "sum_rows" => x.sum(-1isize, false),
            "sum_columns" => x.sum(0isize, false),
            "nonzero" => anydev::nonzero(&x).map(|mut coordinates| coordinates.remove(0)),
            "nonzero_half" => anydev::nonzero(&half).map(|mut coordinates| coordinates.remove(0)),
            "count_half" => anydev::count_nonzero(&half, anydev::ALL, false),
            "take" => x.take(picks.as_ref().expect("made for take"), Some(0)),
            "sort" | "sort_rows" => x.sort(-1, anydev::Order::Ascending),
            "argsort" => x.argsort(-1, anydev::Order::Ascending),
            "matmul" => x.matmul(&y),
            "to_cpu" => x.to_device(anydev::Device::cpu()),
            "from_cpu" => on_host.to_device(device),
            other => panic!("unknown op {other}"),
        }
        .expect("the op runs")
    };
    // One call first, so that one-off work (a GPU backend loading the op's
    // kernels, a pool's first allocation) is not in the timed loop.
    drop(call());
    anydev::accelerator::synchronize(device).expect("the device finishes");
    let start = std::time::Instant::now();
    for _ in 0..calls {
        std::hint::black_box(call());
    }
    anydev::accelerator::synchronize(device).expect("the device finishes");
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    let shape: Vec<String> = shape.iter().map(usize::to_string).collect();
    println!("{op} {size} [{}]: {:.3} us per call", shape.join(", "), per_call * 1e6);
}
