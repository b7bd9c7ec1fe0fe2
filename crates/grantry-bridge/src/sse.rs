//! Server-sent events, as far as an MCP answer stream uses them: `data:` lines make an
//! event, a blank line ends it, comments (`:` keep-alives) and other fields are skipped.

#[derive(Default)]
pub(super) struct Events {
    pending: Vec<u8>,
    data: Vec<String>,
}

impl Events {
    /// Feeds bytes as they arrive; returns the data of each event they complete.
    pub(super) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut complete = Vec::new();
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    complete.push(std::mem::take(&mut self.data).join("\n"));
                }
            } else if let Some(data) = line.strip_prefix("data:") {
                self.data
                    .push(data.strip_prefix(' ').unwrap_or(data).to_owned());
            }
        }
        complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_end_at_blank_lines_whatever_the_chunking() {
        let stream =
            b": keep-alive\n\nevent: message\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: 2\n\n";
        for split in 0..stream.len() {
            let mut events = Events::default();
            let mut seen = events.push(&stream[..split]);
            seen.extend(events.push(&stream[split..]));
            assert_eq!(seen, ["{\"a\":\n1}", "2"], "split at {split}");
        }
    }
}
