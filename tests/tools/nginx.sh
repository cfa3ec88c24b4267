# tests/tools/nginx.sh: nginx_start, for the integration tests (sourced after lib.sh and
# ports.sh): nginx as a strict, independent HTTP/1.1 server answering 202 to POST /inbox.
#
# nginx_start DIR: one worker on a free loopback port (NGINX_PORT), an access log at
# DIR/access.log (status in field 9), stopped by the EXIT trap. 77 when there is no nginx.
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}

nginx_start() {
    local dir=$1
    [ -x "$NGINX" ] || return 77
    mkdir -p "$dir"
    NGINX_PORT=$(pick_port) || return 1
    cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    access_log $dir/access.log;
    client_body_temp_path $dir;
    proxy_temp_path $dir;
    fastcgi_temp_path $dir;
    uwsgi_temp_path $dir;
    scgi_temp_path $dir;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location = /inbox { return 202; }
        location / { return 404; }
    }
}
CONF
    "$NGINX" -p "$dir" -c "$dir/nginx.conf" >"$dir/out.log" 2>&1 &
    T_PIDS="$T_PIDS $!"
    for _ in $(seq 1 100); do
        curl -s -o /dev/null -X POST "http://127.0.0.1:$NGINX_PORT/inbox" && return 0
        sleep 0.05
    done
    echo "# nginx did not start:"
    sed 's/^/#   /' "$dir/out.log" "$dir/error.log" 2>/dev/null
    return 1
}
