"""N copies of one app's server behind one nginx (./benchmark.sh --replicas N,
deployments labelled "tuned x2"): the copies started, and what ran.

The budgets are the app's, whatever the number of copies: its worker
processes for its CPU budget (bench/sut/deployments.py) and its database
connections, each copy running its share (bench/sut/budget.py). So 1, 2 and
4 copies run on the same cores against the same connections, and what the
comparison measures is only how the app is cut.
"""

from bench.sut.processes import free_port, server_command


def start(exits, replicas, port, log_path, launch):
    """Start `replicas` copies inside exits (stopped when it closes), one
    after the other: launch(port, log_path) is one copy's context manager
    (tools/serve.running), yielding its Server once /health answers. The first
    copy listens on port, the others on free ports; each logs to its own file
    (log_path itself for a single copy). Returns the Servers. Raises what
    launch raises (AppNotStarted) at the first copy that does not start."""
    servers = []
    for index in range(replicas):
        path = log_path if replicas == 1 else log_path.with_suffix(f".{index + 1}.log")
        servers.append(exits.enter_context(launch(port if index == 0 else free_port(), path)))
    return servers


def ports(servers):
    """The ports the copies listen on, for nginx's upstream block."""
    return [int(server.url.rsplit(":", 1)[1]) for server in servers]


def command_line(servers):
    """What ran, read from each copy's process: the first copy's command
    line, with "(x N on ports ...)" when the others ran the same one on their
    own port, else every copy's, separated by " ; "."""
    lines = [server_command(server.process.pid) for server in servers]
    if len(servers) == 1:
        return lines[0]
    listening = ports(servers)
    pairs = zip(lines, listening, strict=True)
    mine = {str(line).replace(str(port), "PORT") for line, port in pairs}
    if len(mine) == 1:
        return f"{lines[0]} (x {len(servers)} on ports {', '.join(map(str, listening))})"
    return " ; ".join(str(line) for line in lines)
