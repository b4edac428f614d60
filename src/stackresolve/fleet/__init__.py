"""Planning for many machines at once (`stackresolve plan --fleet SOURCE`).

    readers   text of a `kubectl get nodes -o json` document, `detect@1` reports or an inventory file -> Members
    grouping  Members with the same facts -> Groups (for Kubernetes: node pools as their labels show them)
    decide    Groups + the target Request -> FleetPlan: one resolver request over the groups of an OS, the newest
              stack that runs natively on every one, else the fewest stacks that cover them; groups that cannot
              run the target at all are excluded with the resolver's reason
    render    the table, the `fleet` field of the plan@1 document, a Kubernetes nodeAffinity per stack

Pure: the command-line module reads the files and writes the output.
"""
