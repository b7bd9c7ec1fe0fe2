//! The built-in demo provider (placeholder; being written).
