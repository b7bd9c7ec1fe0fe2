//! What an attempt's answer means for its delivery: delivered, tried again after the
//! schedule's next delay (with jitter, honouring `Retry-After`), or parked.

use super::Outcome;
use crate::config::webhooks::RetrySchedule;

/// What the endpoint did with one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// It answered with this status (and `Retry-After` seconds, when it sent them).
    Status {
        code: u16,
        retry_after_secs: Option<u64>,
    },
    /// No answer: refused, reset, timed out, TLS failed.
    Transport(String),
}

/// A 4xx other than 408 and 429 is parked after this many attempts, not retried for days:
/// the endpoint refuses what it is sent.
const REFUSALS_BEFORE_PARKING: i64 = 3;

/// The outcome of attempt number `attempts` (counting from 1) that got `answer` at `now`.
pub(crate) fn outcome(
    answer: &Answer,
    attempts: i64,
    schedule: &RetrySchedule,
    now: i64,
) -> Outcome {
    let (error, retry_after) = match answer {
        Answer::Status { code, .. } if (200..300).contains(code) => {
            return Outcome::Delivered { at: now };
        }
        Answer::Status { code: 410, .. } => {
            return Outcome::Parked {
                error: "410 Gone: the endpoint asks not to be sent more".into(),
            };
        }
        Answer::Status { code, .. }
            if (400..500).contains(code)
                && *code != 408
                && *code != 429
                && attempts >= REFUSALS_BEFORE_PARKING =>
        {
            return Outcome::Parked {
                error: format!("{code} after {attempts} attempts"),
            };
        }
        Answer::Status {
            code,
            retry_after_secs,
        } => (format!("HTTP {code}"), *retry_after_secs),
        Answer::Transport(why) => (why.clone(), None),
    };
    let Some(delay) = usize::try_from(attempts - 1)
        .ok()
        .and_then(|i| schedule.0.get(i))
    else {
        return Outcome::Parked {
            error: format!("{error}; retries spent after {attempts} attempts"),
        };
    };
    let delay = delay.as_secs() as i64;
    // Up to a tenth later, so deliveries that failed together do not return together.
    let jitter = rand::random_range(0..=delay / 10);
    let asked = retry_after.map_or(0, |secs| secs.min(86_400) as i64);
    Outcome::Failed {
        next_attempt_at: now + (delay + jitter).max(asked),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> Answer {
        Answer::Status {
            code,
            retry_after_secs: None,
        }
    }

    fn schedule() -> RetrySchedule {
        "10,100".parse().unwrap()
    }

    #[test]
    fn success_is_any_2xx() {
        for code in [200, 202, 204] {
            assert_eq!(
                outcome(&status(code), 1, &schedule(), 5),
                Outcome::Delivered { at: 5 }
            );
        }
    }

    #[test]
    fn failures_follow_the_schedule_then_park() {
        let next = |attempts| match outcome(&status(500), attempts, &schedule(), 1000) {
            Outcome::Failed {
                next_attempt_at, ..
            } => Some(next_attempt_at),
            _ => None,
        };
        assert!((1010..=1011).contains(&next(1).unwrap()));
        assert!((1100..=1110).contains(&next(2).unwrap()));
        assert_eq!(next(3), None, "parked after the schedule");
        let timeout = Answer::Transport("timed out".into());
        assert!(matches!(
            outcome(&timeout, 1, &schedule(), 0),
            Outcome::Failed { .. }
        ));
    }

    #[test]
    fn refusals_are_parked_early_but_not_throttling() {
        assert!(matches!(
            outcome(&status(400), 1, &schedule(), 0),
            Outcome::Failed { .. }
        ));
        assert!(matches!(
            outcome(&status(404), 3, &schedule(), 0),
            Outcome::Parked { .. }
        ));
        assert!(matches!(
            outcome(&status(410), 1, &schedule(), 0),
            Outcome::Parked { .. }
        ));
        let long: RetrySchedule = "1,1,1,1".parse().unwrap();
        for code in [408, 429, 302] {
            assert!(
                matches!(outcome(&status(code), 3, &long, 0), Outcome::Failed { .. }),
                "{code}"
            );
        }
        let throttled = Answer::Status {
            code: 429,
            retry_after_secs: Some(600),
        };
        assert_eq!(
            outcome(&throttled, 1, &schedule(), 0),
            Outcome::Failed {
                next_attempt_at: 600,
                error: "HTTP 429".into()
            }
        );
    }
}
