fn main() -> std::process::ExitCode {
    memtriage::main(std::env::args_os())
}
