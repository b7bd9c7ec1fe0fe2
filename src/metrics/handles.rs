//! The per-request MCP series, registered once at install: looking a series up by name and
//! labels on every request cost about 3 % of a `server/discover` under load (perf). Every
//! method label gets its series from the start, so a scrape shows zeros rather than nothing.

use metrics::{Counter, Histogram};

use super::{KNOWN_METHODS, MCP_DURATION, MCP_REQUESTS, Outcome};

/// Every `Outcome`, in declaration order: `outcome as usize` indexes it.
const OUTCOMES: [Outcome; 7] = [
    Outcome::Complete,
    Outcome::InputRequired,
    Outcome::Error,
    Outcome::Streamed,
    Outcome::Refused,
    Outcome::Failed,
    Outcome::Task,
];

/// The series of one method label.
pub(super) struct MethodSeries {
    label: &'static str,
    requests: [Counter; OUTCOMES.len()],
    pub(super) duration: Histogram,
}

impl MethodSeries {
    pub(super) fn requests(&self, outcome: Outcome) -> &Counter {
        &self.requests[outcome as usize]
    }
}

/// The series of every method label (the known methods, `other` and `none`).
pub(super) struct McpSeries(Vec<MethodSeries>);

impl McpSeries {
    /// Registers the series with the installed recorder.
    pub(super) fn register() -> Self {
        let labels = KNOWN_METHODS.iter().copied().chain(["other", "none"]);
        Self(
            labels
                .map(|label| MethodSeries {
                    label,
                    requests: OUTCOMES.map(|outcome| {
                        metrics::counter!(MCP_REQUESTS, "method" => label, "outcome" => outcome.label())
                    }),
                    duration: metrics::histogram!(MCP_DURATION, "method" => label),
                })
                .collect(),
        )
    }

    /// The series of `label`, one of [`super::method_label`]'s values (`other`'s for any
    /// other).
    pub(super) fn of(&self, label: &str) -> &MethodSeries {
        let other = || self.0.iter().find(|series| series.label == "other");
        self.0
            .iter()
            .find(|series| series.label == label)
            .or_else(other)
            .expect("the series of `other` are registered")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_index_their_own_series() {
        for (i, outcome) in OUTCOMES.iter().enumerate() {
            assert_eq!(*outcome as usize, i);
        }
    }
}
