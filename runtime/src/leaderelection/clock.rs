//! The wall time leader election writes (a Lease's `renewTime`, a LeaseCandidate's): the
//! system clock, moved by however far tokio's clock is from the monotonic clock.
//!
//! With tokio's clock running normally the two agree and this is the system clock. With
//! it paused or advanced (tokio's `test-util`: `tokio::time::pause`, a test server's
//! `paused_clock`), timestamps move with tokio's time, as the delays and the local lease
//! timing do, and agree with a server whose clock is tokio's: a coordinated leader
//! election controller compares them with its own now.

use k8s_openapi::jiff::Timestamp;

/// Now, on tokio's clock.
pub(super) fn now() -> Timestamp {
    // tokio's clock is read between two reads of the monotonic clock (and so is the wall
    // clock): a running tokio clock *is* the monotonic clock, so it falls between them, and
    // the wall clock is the answer, however long the thread was preempted between reads.
    let std_before = std::time::Instant::now();
    let wall = Timestamp::now();
    let tokio_now = tokio::time::Instant::now().into_std();
    let std_after = std::time::Instant::now();
    let shifted = if tokio_now > std_after {
        wall.checked_add(tokio_now.duration_since(std_after))
    } else if tokio_now < std_before {
        wall.checked_sub(std_before.duration_since(tokio_now))
    } else {
        return wall;
    };
    shifted.unwrap_or(wall)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn on_a_running_clock_now_is_the_system_clock() {
        let (before, now, after) = (Timestamp::now(), now(), Timestamp::now());
        assert!(before <= now && now <= after + Duration::from_millis(1));
    }

    #[tokio::test(start_paused = true)]
    async fn on_a_paused_clock_now_moves_with_tokio() {
        let start = now();
        tokio::time::advance(Duration::from_secs(3600)).await;
        let later = now();
        let moved = later.duration_since(start).as_secs_f64();
        assert!((3599.0..3601.0).contains(&moved), "moved {moved} s");
    }
}
