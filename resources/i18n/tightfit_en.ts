<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en" sourcelanguage="en">
<context>
    <name>exporter</name>
    <message numerus="yes">
        <source>%n GPU(s) on {host}, read-only</source>
        <translation>
            <numerusform>%n GPU on {host}, read-only</numerusform>
            <numerusform>%n GPUs on {host}, read-only</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>history_panel</name>
    <message numerus="yes">
        <source>%n message(s)</source>
        <translation>
            <numerusform>%n message</numerusform>
            <numerusform>%n messages</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>model_picker</name>
    <message numerus="yes">
        <source>%n layer(s)</source>
        <translation>
            <numerusform>%n layer</numerusform>
            <numerusform>%n layers</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>rpc_panel</name>
    <message numerus="yes">
        <source>%n device(s) on the RPC workers ({devices}), {free} MiB free, planned before this machine&apos;s.</source>
        <translation>
            <numerusform>%n device on the RPC workers ({devices}), {free} MiB free, planned before this machine&apos;s.</numerusform>
            <numerusform>%n devices on the RPC workers ({devices}), {free} MiB free, planned before this machine&apos;s.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n device(s), {free} MiB free</source>
        <translation>
            <numerusform>%n device, {free} MiB free</numerusform>
            <numerusform>%n devices, {free} MiB free</numerusform>
        </translation>
    </message>
</context>
</TS>
