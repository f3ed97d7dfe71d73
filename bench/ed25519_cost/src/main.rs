//! Signs a pass's JWS signing input (header and claims, base64url, ~250 bytes) 20,000
//! times with each Ed25519 implementation, 3 rounds, and prints µs per signature. The
//! three give the same signature for the same key (Ed25519 is deterministic), which is
//! checked first: a pass would be byte for byte the same whichever signs it.

use std::time::Instant;

const INPUT: &[u8] = b"eyJ0eXAiOiJKV1QiLCJhbGciOiJFZERTQSIsImtpZCI6ImFiY2RlZmdoaWprbG1ub3AifQ.eyJpc3MiOiJhbnRlcm9vbSIsInJvb20iOiJiZW5jaCIsInN1YiI6InYxMjM0NTY3ODkwYWJjZGVmIiwiaWF0IjoxNzAwMDAwMDAwLCJleHAiOjE3MDAwMDAwNjAsImp0aSI6ImJlbmNoLjEyMzQ1In0";
const N: u32 = 20_000;

fn per_sig(mut f: impl FnMut() -> u8) -> f64 {
    let t = Instant::now();
    let mut x = 0u8;
    for _ in 0..N {
        x ^= f();
    }
    std::hint::black_box(x);
    t.elapsed().as_secs_f64() * 1e6 / f64::from(N)
}

fn main() {
    let seed = [7u8; 32];
    let d2 = ed25519_dalek::SigningKey::from_bytes(&seed);
    let d3 = ed3::SigningKey::from_bytes(&seed);
    // unwrap: any 32 bytes are a seed.
    let r = ring::signature::Ed25519KeyPair::from_seed_unchecked(&seed).unwrap();
    let sig2 = ed25519_dalek::Signer::sign(&d2, INPUT).to_bytes();
    assert_eq!(sig2.as_slice(), r.sign(INPUT).as_ref(), "ring signs alike");
    assert_eq!(
        sig2,
        ed3::Signer::sign(&d3, INPUT).to_bytes(),
        "dalek 3 signs alike"
    );
    for round in 1..=3 {
        let a = per_sig(|| ed25519_dalek::Signer::sign(&d2, INPUT).to_bytes()[0]);
        let b = per_sig(|| r.sign(INPUT).as_ref()[0]);
        let c = per_sig(|| ed3::Signer::sign(&d3, INPUT).to_bytes()[0]);
        println!("round {round}: ed25519-dalek 2.2 {a:.2} µs, ring 0.17 {b:.2} µs, ed25519-dalek 3.0 {c:.2} µs a signature");
    }
}
