//! Measures the CPU cost of filling and verifying blocks (GB/s on one core).
use hostd_workload::block::{BlockCodec, DataPool};
use std::time::Instant;

fn cpu() -> f64 {
    hostd_workload::cputime::process_cpu_seconds().0
}

fn main() {
    let codec = BlockCodec::new(DataPool::new(1), 0, 0);
    let mut buf = vec![0u8; 1 << 20];
    let n = 2048u64; // 2 GiB
    let t = Instant::now();
    let mut primed = None;
    for i in 0..n {
        codec.fill_reusing(&mut buf, i << 20, &mut primed);
    }
    let fill = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut bad = 0;
    for i in 0..n {
        codec.fill(&mut buf, i << 20);
    }
    let fill_fresh = t.elapsed().as_secs_f64();
    codec.fill(&mut buf, 0);
    let c0 = cpu();
    let t = Instant::now();
    for _ in 0..n {
        bad += codec.verify(&buf, 0).corrupt_blocks;
    }
    let verify = t.elapsed().as_secs_f64();
    let verify_cpu = cpu() - c0;
    // Cold data: a buffer far larger than the caches, verified once.
    let mut big = vec![0u8; 512 << 20];
    for (i, c) in big.chunks_exact_mut(1 << 20).enumerate() {
        codec.fill(c, (i as u64) << 20);
    }
    let c1 = cpu();
    for (i, c) in big.chunks_exact(1 << 20).enumerate() {
        bad += codec.verify(c, (i as u64) << 20).corrupt_blocks;
    }
    let cold_cpu = cpu() - c1;
    println!(
        "verify cold (512 MiB buffer): {:.1} GB/s per CPU second",
        (512u64 << 20) as f64 / 1e9 / cold_cpu
    );
    let gb = (n << 20) as f64 / 1e9;
    println!("fill (reused buffers) {:.1} GB/s, fill (fresh) {:.1} GB/s, verify {:.1} GB/s wall, {:.1} GB/s per CPU second ({bad} bad)", gb / fill, gb / fill_fresh, gb / verify, gb / verify_cpu);
}
