/* flood/dash/dash_page.c: the dashboard's page: one HTML string, inline CSS and a small
 * inline script that draws SVG charts with report.html's colours (report_plot.c's palette)
 * and series, fed by the /events stream. Nothing is loaded from the network. The page keeps
 * the last WINDOW seconds whole and everything older downsampled into buckets whose width
 * doubles when there are too many, so an hours-long run stays a few thousand points. */
#include <stdio.h>
#include <stdlib.h>

#include "flood/dash/dash_internal.h"
#include "flood/report/report_plot.h"

static const char head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<link rel=\"icon\" href=\"data:,\">\n<title>flood dashboard</title>\n<style>\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:1100px;padding:16px 24px;color:#1b1b1b;background:#fff}\n"
    "h1{font-size:22px;margin:8px 0 2px}.sub{color:#555;margin:0 0 12px}\n"
    ".counts{display:flex;flex-wrap:wrap;gap:6px 22px;margin:8px 0;font-variant-numeric:"
    "tabular-nums}.counts b{font-size:18px;display:block}\n"
    ".controls{background:#f4f4f4;padding:8px 12px;margin:8px 0;display:flex;flex-wrap:wrap;"
    "gap:8px;align-items:center}.controls input{width:90px}\n"
    "#msg{color:#b00020;min-height:1.4em}.ok{color:#11703a;font-weight:600}\n"
    "figure.chart{margin:10px 0 18px}figcaption{font-weight:600;margin-bottom:2px}\n"
    "svg.plot{width:100%;height:auto;display:block}\n"
    "svg .grid{stroke:#e6e6e6;stroke-width:1}svg .frame{fill:none;stroke:#999}\n"
    "svg text{font:11px system-ui,sans-serif;fill:#333}svg .mark{stroke:#555;"
    "stroke-dasharray:3 3}\n#end{background:#e8f5e9;padding:6px 10px;display:none}\n"
    "</style></head><body>\n";

static const char body[] =
    "<h1 id=\"h1\">flood: live run</h1><p class=\"sub\" id=\"title\"></p>\n"
    "<p id=\"status\">connecting</p><p id=\"end\"></p>\n"
    "<div class=\"counts\" id=\"counts\"></div><p id=\"faults-on\"></p>\n"
    "<div class=\"controls\" id=\"steer\">rate <input id=\"rate\" type=\"number\" min=\"0\" "
    "step=\"any\"> /s over <input id=\"ramp\" type=\"number\" min=\"0\" value=\"0\" "
    "step=\"any\"> s <button id=\"apply\">set rate</button> <button id=\"pause\">pause"
    "</button><button id=\"resume\">resume</button><button id=\"stop\">stop run</button></div>\n"
    "<div class=\"controls\" id=\"faults\">fault on <input id=\"f-inst\" value=\"flood1\"> "
    "<input id=\"f-spec\" value=\"delay=2s\" style=\"width:200px\"> <button id=\"f-on\">on"
    "</button><button id=\"f-off\">off</button></div>\n<p id=\"msg\"></p>\n"
    "<div id=\"charts\"></div>\n";

/* The script (a run's rows or a crowd's, told apart by "kind"; a new dashboard instance at
 * the same address, the next step of flood capacity, starts the page over); PAL, TITLE and
 * CROWD are prepended. */
static const char script[] =
    "const WINDOW=600,MAXB=1200;const $=id=>document.getElementById(id);\n"
    "const tok=new URLSearchParams(location.search).get('token');\n"
    "const q=tok?'token='+encodeURIComponent(tok):'';\n"
    "const D={win:[],hist:[],bw:10,last:-1,marks:[],tot:{},es:null,ended:false,rows:0,gaps:0,"
    "reconnects:0,crowd:null,inst:'',steps:0,keys:{deliveries:[],fetches:[]}};window.floodDas"
    "h=D;\n"
    "const O=(e,k)=>(e.outcomes&&e.outcomes[k])||0;const ok2=e=>O(e,'200')+O(e,'202')+O(e,'2x"
    "x_other');\n"
    "const errs=e=>['timeout','refused','reset','dns','tls','other','transport'].reduce((a,k)"
    "=>a+O(e,k),0);\n"
    "const oth=e=>Object.values(e.outcomes||{}).reduce((a,v)=>a+v,0)-ok2(e)-O(e,'401')-O(e,'4"
    "03')-O(e,'429')-O(e,'503');\n"
    "const G=(e,k,j)=>(e[k]&&e[k][j])||0;\n"
    "const CK={run:[['seconds','seconds'],['rate','target rate /s'],['offered','offered'],['s"
    "ent','sent'],['completed','completed'],['ok','2xx'],['errors','errors'],['shed','shed'],"
    "['inflight','in flight']],crowd:[['seconds','seconds'],['deliveries','deliveries'],['acc"
    "epts','Accepts sent'],['fetches','fetches'],['bytes','fetch bytes'],['requests','request"
    "s'],['faulted','faulted answers']]};\n"
    "function mode(c){D.crowd=c;const L=CK[c?'crowd':'run'];D.tot={};for(const[k]of L)if(k!=="
    "'seconds'&&k!=='rate'&&k!=='inflight')D.tot[k]=0;$('counts').innerHTML=L.map(([k,n])=>`<"
    "span>${n}<b id=\"c-${k}\">${k==='rate'?'-':0}</b></span>`).join('');$('h1').textContent="
    "c?'flood: live crowd':'flood: live run';$('steer').style.display=c?'none':''}\n"
    "function reset(){D.win=[];D.hist=[];D.bw=10;D.last=-1;D.marks=[];D.rows=0;D.gaps=0;D.end"
    "ed=false;D.keys={deliveries:[],fetches:[]};mode(D.crowd);$('end').style.display='none';$"
    "('faults-on').textContent=''}\n"
    "function bucket(rows){const n=rows.length,b={t:rows[0].t,w:n,kind:rows[0].kind};for(cons"
    "t r of rows)for(const[k,v]of Object.entries(r)){if(k==='t'||k==='w'||k==='kind')continue"
    ";if(typeof v==='number')b[k]=/_ms$/.test(k)?Math.max(b[k]||0,v):(b[k]||0)+v/n;else if(v&"
    "&typeof v==='object'&&!Array.isArray(v)){const o=b[k]||(b[k]={});for(const[j,x]of Object"
    ".entries(v))o[j]=(o[j]||0)+x/n}else b[k]=v}return b}\n"
    "function add(r){if(r.t<=D.last)return;if((r.kind==='crowd')!==D.crowd)mode(r.kind==='cro"
    "wd');if(D.last>=0&&r.t!==D.last+1)D.gaps++;D.last=r.t;D.rows++;const T=D.tot;\n"
    "if(D.crowd){T.deliveries+=G(r,'deliveries','total');T.accepts+=r.accepts_sent||0;T.fetch"
    "es+=G(r,'fetches','total');T.bytes+=G(r,'fetch_bytes','total');T.requests+=r.requests||0"
    ";T.faulted+=G(r,'faulted','total');for(const k of['deliveries','fetches'])for(const j of"
    " Object.keys(r[k]||{}))if(j!=='total'&&!D.keys[k].includes(j))D.keys[k].push(j);$('fault"
    "s-on').textContent=r.faults&&r.faults.length?'faults in force: '+r.faults.join(', '):''}"
    "\n"
    "else{T.offered+=r.offered;T.sent+=r.sent;T.completed+=r.completed;T.ok+=ok2(r);T.errors+"
    "=errs(r);T.shed+=r.shed||0;$('c-inflight').textContent=r.in_flight}\n"
    "r.w=1;D.win.push(r);while(D.win.length>WINDOW+D.bw){D.hist.push(bucket(D.win.splice(0,D."
    "bw)))}if(D.hist.length>MAXB){const h=[];for(let i=0;i+1<D.hist.length;i+=2){const a=D.hi"
    "st[i],c=D.hist[i+1],m=bucket([a,c]);m.w=a.w+c.w;h.push(m)}D.hist=h;D.bw*=2}\n"
    "$('c-seconds').textContent=r.t+1;for(const k in T)$('c-'+k).textContent=Math.round(T[k])"
    "}\n"
    "function pts(){return D.hist.concat(D.win)}\n"
    "function chart(id,title,ylab,series,stacked){const W=960,H=260,ML=70,MR=170,MT=10,MB=40,"
    "PW=W-ML-MR,PH=H-MT-MB;const P=pts();let x0=P.length?P[0].t:0,x1=P.length?P[P.length-1].t"
    "+(P[P.length-1].w||1):1;if(x1<=x0)x1=x0+1;let ym=0;const acc=P.map(()=>0);const ys=serie"
    "s.map(s=>P.map((p,i)=>{const v=s.f(p);if(stacked){acc[i]+=v;return acc[i]}return v}));fo"
    "r(const y of ys)for(const v of y)if(isFinite(v)&&v>ym)ym=v;if(ym<=0)ym=1;ym*=1.05;const "
    "sx=x=>ML+(x-x0)/(x1-x0)*PW,sy=y=>MT+PH-y/ym*PH;\n"
    "let s=`<svg class=\"plot\" id=\"${id}\" viewBox=\"0 0 ${W} ${H}\" role=\"img\">`;for(let"
    " i=0;i<=4;i++){const y=ym*i/4;s+=`<line class=\"grid\" x1=\"${ML}\" x2=\"${ML+PW}\" y1="
    "\"${sy(y)}\" y2=\"${sy(y)}\"/><text x=\"${ML-6}\" y=\"${sy(y)+4}\" text-anchor=\"end\">$"
    "{y>=100?Math.round(y):y.toPrecision(2)}</text>`;const x=x0+(x1-x0)*i/4;s+=`<text x=\"${s"
    "x(x)}\" y=\"${MT+PH+16}\" text-anchor=\"middle\">${Math.round(x)}</text>`}s+=`<rect clas"
    "s=\"frame\" x=\"${ML}\" y=\"${MT}\" width=\"${PW}\" height=\"${PH}\"/><text x=\"${ML+PW/"
    "2}\" y=\"${H-4}\" text-anchor=\"middle\">seconds since start</text><text x=\"14\" y=\"${"
    "MT+PH/2}\" transform=\"rotate(-90 14 ${MT+PH/2})\" text-anchor=\"middle\">${ylab}</text>"
    "`;\n"
    "series.forEach((se,k)=>{const y=ys[k];let d='';P.forEach((p,i)=>{const xm=stacked?p.t:p."
    "t+(p.w||1)/2;if(!isFinite(y[i]))return;if(stacked){const y0=k?ys[k-1][i]:0;d+=`M${sx(xm)"
    "},${sy(y0)}L${sx(xm)},${sy(y[i])}L${sx(xm+(p.w||1))},${sy(y[i])}L${sx(xm+(p.w||1))},${sy"
    "(y0)}Z`}else d+=(d?'L':'M')+sx(xm).toFixed(1)+','+sy(y[i]).toFixed(1)});s+=stacked?`<pat"
    "h class=\"series\" data-series=\"${se.n}\" data-points=\"${P.length}\" fill=\"${PAL[se.c"
    "%10]}\" fill-opacity=\"0.8\" d=\"${d}\"/>`:`<path class=\"series\" data-series=\"${se.n}"
    "\" data-points=\"${P.length}\" fill=\"none\" stroke=\"${PAL[se.c%10]}\" stroke-width=\"1"
    ".6\" ${se.dash?'stroke-dasharray=\"5 3\"':''} d=\"${d}\"/>`;s+=`<rect x=\"${ML+PW+12}\" "
    "y=\"${MT+k*16}\" width=\"12\" height=\"10\" fill=\"${PAL[se.c%10]}\"/><text x=\"${ML+PW+"
    "28}\" y=\"${MT+k*16+9}\">${se.n}</text>`});\n"
    "const rows=[];D.marks.forEach(m=>{if(m.t_s<x0||m.t_s>x1)return;const x=sx(m.t_s),t=label"
    "(m),w=t.length*6+6;let r=0;while(r<rows.length&&rows[r]>x)r++;rows[r]=x+w;s+=`<line clas"
    "s=\"mark\" data-kind=\"${m.kind}\" x1=\"${x}\" x2=\"${x}\" y1=\"${MT}\" y2=\"${MT+PH}\"/"
    "><text x=\"${x+3}\" y=\"${MT+10+r*11}\">${t}</text>`});\n"
    "return `<figure class=\"chart\"><figcaption>${title}</figcaption>${s}</svg></figure>`}\n"
    "function label(m){const v=m.kind==='fault'?(m.on?'+':'-')+m.value:m.value!==undefined?Ma"
    "th.round(m.value)+'/s':'';return (m.kind+' '+v).replace(/[<&\"]/g,'')}\n"
    "function drawRun(){return chart('plot-rate','Offered vs achieved rate','requests per sec"
    "ond',[{n:'offered',c:8,f:p=>p.offered},{n:'sent',c:0,f:p=>p.sent,dash:1},{n:'completed ("
    "achieved)',c:2,f:p=>p.completed},{n:'2xx',c:1,f:ok2}])+chart('plot-outcomes','Outcomes p"
    "er second (stacked)','answers per second',[{n:'2xx',c:2,f:ok2},{n:'401/403',c:4,f:p=>O(p"
    ",'401')+O(p,'403')},{n:'429',c:1,f:p=>O(p,'429')},{n:'503',c:3,f:p=>O(p,'503')},{n:'othe"
    "r errors',c:7,f:oth},{n:'shed',c:8,f:p=>p.shed||0}],1)+chart('plot-latency','Latency ove"
    "r time (corrected for coordinated omission)','milliseconds',[{n:'p50',c:0,f:p=>p.p50_ms}"
    ",{n:'p99',c:3,f:p=>p.p99_ms},{n:'max',c:7,f:p=>p.max_ms}])+chart('plot-inflight','Reques"
    "ts in flight (at each second\\'s end)','requests',[{n:'in flight',c:5,f:p=>p.in_flight}]"
    ")}\n"
    "function drawCrowd(){const by=k=>D.keys[k].map((j,i)=>({n:j,c:i,f:p=>G(p,k,j)}));return "
    "chart('plot-deliveries','Deliveries to the crowd per second, by type (stacked)','deliver"
    "ies per second',by('deliveries'),1)+chart('plot-fetches','The target\\'s fetches from th"
    "e crowd per second, by kind (stacked)','fetches per second',by('fetches'),1)+chart('plot"
    "-answers','Accepts sent, rejected deliveries and faulted answers per second','per second"
    "',[{n:'Accepts sent',c:2,f:p=>p.accepts_sent||0},{n:'Accepts failed',c:7,f:p=>p.accepts_"
    "failed||0},{n:'rejected',c:3,f:p=>p.rejected||0},{n:'faulted',c:1,f:p=>G(p,'faulted','to"
    "tal')}])+chart('plot-requests','Requests served per second, by status (stacked)','reques"
    "ts per second',[{n:'2xx',c:2,f:p=>G(p,'status','2xx')},{n:'3xx',c:0,f:p=>G(p,'status','3"
    "xx')},{n:'4xx',c:1,f:p=>G(p,'status','4xx')},{n:'5xx',c:3,f:p=>G(p,'status','5xx')},{n:'"
    "other',c:7,f:p=>G(p,'status','other')}],1)+chart('plot-bytes','Bytes the target fetched "
    "per second','bytes per second',[{n:'fetch bytes',c:4,f:p=>G(p,'fetch_bytes','total')}])}"
    "\n"
    "function draw(){$('charts').innerHTML=D.crowd?drawCrowd():drawRun()}\n"
    "let dirty=false;setInterval(()=>{if(dirty){dirty=false;draw()}},500);\n"
    "function connect(){const u='/events?'+q+(D.inst?(q?'&':'')+'inst='+encodeURIComponent(D."
    "inst):'')+(D.last>=0?'&from='+(D.last+1):'');const es=new EventSource(u);D.es=es;\n"
    "es.addEventListener('hello',e=>{const h=JSON.parse(e.data);if(D.inst&&h.instance!==D.ins"
    "t){D.steps++;D.crowd=!!h.crowd;reset();dirty=true}else if(!!h.crowd!==D.crowd)mode(!!h.c"
    "rowd);D.inst=h.instance;$('title').textContent=h.title});\n"
    "es.addEventListener('row',e=>{add(JSON.parse(e.data));dirty=true;$('status').textContent"
    "=D.crowd?'serving':D.paused?'paused':'running'});\n"
    "es.addEventListener('steering',e=>{D.marks=JSON.parse(e.data);dirty=true});\n"
    "es.addEventListener('end',e=>{const j=JSON.parse(e.data);D.ended=true;es.close();$('stat"
    "us').textContent='finished';const el=$('end');el.style.display='block';el.innerHTML=D.cr"
    "owd&&!j.report?'The crowd stopped.':'The run is over. <a href=\"/report.html'+(q?'?'+q:'"
    "')+'\">report.html</a>'+(j.report?' ('+j.report.replace(/[<&]/g,'')+')':'');dirty=true})"
    ";\n"
    "es.onerror=()=>{if(D.ended)return;es.close();D.reconnects++;$('status').textContent='rec"
    "onnecting';setTimeout(connect,D.hold||1000);D.hold=0}}\n"
    "D.lose=ms=>{D.es.close();D.hold=ms;D.es.onerror()};\n"
    "async function api(path,body){const r=await fetch('/api/'+path+(q?'?'+q:''),{method:body"
    "===undefined?'GET':'POST',headers:{'Content-Type':'application/json'},body:body===undefi"
    "ned?undefined:JSON.stringify(body)});const j=await r.json();$('msg').textContent=r.ok?''"
    ":j.error;if(r.ok)poll();return j}\n"
    "async function poll(){try{const s=await api('state');if(s.instance&&D.inst&&s.instance!="
    "=D.inst&&D.ended){D.ended=false;connect()}D.paused=s.paused;if(!s.steerable)$('steer').s"
    "tyle.display='none';if(!D.crowd)$('c-rate').textContent=s.sending?Math.round(s.rate*10)/"
    "10:'-';if(s.sending)$('status').textContent=s.paused?'paused':'running';}catch(e){}}\n"
    "setInterval(poll,1000);poll();\n"
    "$('apply').onclick=()=>api('rate',{rate:Number($('rate').value),ramp_s:Number($('ramp')."
    "value||0)});$('pause').onclick=()=>api('pause',{});$('resume').onclick=()=>api('resume',"
    "{});$('stop').onclick=()=>api('stop',{});\n"
    "$('f-on').onclick=()=>api('fault',{instance:$('f-inst').value,spec:$('f-spec').value,on:"
    "true});$('f-off').onclick=()=>api('fault',{instance:$('f-inst').value,spec:$('f-spec').v"
    "alue,on:false});\n"
    "$('title').textContent=TITLE;mode(CROWD);draw();connect();\n";

char *dash_page(const struct dash *d)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) {
        fprintf(stderr, "flood: out of memory (dashboard page)\n");
        abort();
    }
    fputs(head, f);
    fputs(body, f);
    fputs("<script>\nconst PAL=[", f);
    for (size_t i = 0; i < 10; i++)
        fprintf(f, "%s\"%s\"", i ? "," : "", plot_color(i));
    json_t *t = json_string(d->title);
    char *tj = json_dumps(t, JSON_ENCODE_ANY | JSON_ESCAPE_SLASH);
    json_decref(t);
    fprintf(f, "];\nconst TITLE=%s,CROWD=%s;\n", tj ? tj : "\"\"", d->crowd ? "true" : "false");
    free(tj);
    fputs(script, f);
    fputs("</script>\n</body></html>\n", f);
    fclose(f);
    return out;
}
